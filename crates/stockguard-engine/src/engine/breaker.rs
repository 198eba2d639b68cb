//! The circuit breaker: when Redis times out or its connection fails again and again, this
//! instance stops using it and takes orders through the DB path by itself.
//!
//! It never flaps. Tripping needs `trip_after` qualifying failures in a row (one success
//! resets the count), lasting at least `grace`. On Redis Cluster the grace covers a failover:
//! while a failed master's replica is promoted (the node timeout plus an election), the
//! reservations of its slots fail, and the cluster heals by itself; tripping would take the
//! whole instance, every product, to the DB path until someone runs the guided exit. Once
//! tripped it stays on the DB path: it probes Redis and reports `OPEN` (still failing) or
//! `HALF_OPEN` (answering `healthy_probes` times in a row), but it goes back to Redis only
//! when its home's switch row (the global row for the sale's engines, the rig's row for a
//! drill's) returns to `NORMAL` at a revision newer than the trip, which only the guided exit
//! writes. Why not close by itself: while it sold through the DB, Redis stock kept its old,
//! too-high value; selling from it again before the rebuild would accept orders the DB then
//! refuses.
//!
//! Only failures of the connection or of time count ([`classify`]): a script error or a
//! wrong-type reply is a bug, not an outage, and says nothing about Redis being reachable.

use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use chrono::NaiveDateTime;

use stockguard_core::switch::acks::BreakerReport;

#[derive(Debug, Clone)]
pub struct BreakerConfig {
    /// Qualifying Redis failures in a row that trip the breaker (0: never trips).
    pub trip_after: u32,
    /// How often a tripped breaker probes Redis.
    pub probe_interval: Duration,
    /// Successful probes in a row before a tripped breaker reports Redis healthy.
    pub healthy_probes: u32,
    /// How long failures must go on, in a row, before they trip it (0: at once).
    pub grace: Duration,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        Self { trip_after: 5, probe_interval: Duration::from_millis(250), healthy_probes: 3, grace: Duration::ZERO }
    }
}

/// The grace of an engine on Redis Cluster: a failover takes the node timeout (15 s by
/// default) plus an election of about a second.
pub const CLUSTER_FAILOVER_GRACE: Duration = Duration::from_secs(20);

/// The kinds of Redis failure that mean "Redis is unreachable or too slow".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedisFault {
    Timeout,
    Connection,
}

impl RedisFault {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::Connection => "connection",
        }
    }
}

/// Sorts a Redis error by kind; `None` for errors that are not about reachability.
pub fn classify(err: &redis::RedisError) -> Option<RedisFault> {
    if err.is_timeout() {
        Some(RedisFault::Timeout)
    } else if err.is_connection_dropped()
        || err.is_connection_refusal()
        || err.is_io_error()
        || err.is_unrecoverable_error()
    {
        Some(RedisFault::Connection)
    } else {
        None
    }
}

const CLOSED: u8 = 0;
const OPEN: u8 = 1;
const HALF_OPEN: u8 = 2;

#[derive(Debug, Default)]
struct Trip {
    reason: Option<String>,
    at: Option<NaiveDateTime>,
    /// The home row's revision when it tripped; only a newer NORMAL closes it.
    home_revision: u64,
    good_probes: u32,
}

#[derive(Debug)]
pub struct Breaker {
    config: BreakerConfig,
    state: AtomicU8,
    failures_in_a_row: AtomicU32,
    /// When the current run of failures began.
    failing_since: Mutex<Option<std::time::Instant>>,
    trip: Mutex<Trip>,
}

impl Breaker {
    pub fn new(config: BreakerConfig) -> Self {
        Self {
            config,
            state: AtomicU8::new(CLOSED),
            failures_in_a_row: AtomicU32::new(0),
            failing_since: Mutex::default(),
            trip: Mutex::default(),
        }
    }

    pub fn config(&self) -> &BreakerConfig {
        &self.config
    }

    /// True once tripped, until the guided exit closes it.
    pub fn is_tripped(&self) -> bool {
        self.state.load(Ordering::Acquire) != CLOSED
    }

    /// The home row's revision in force when it tripped; `None` while closed.
    pub fn tripped_under(&self) -> Option<u64> {
        if !self.is_tripped() {
            return None;
        }
        Some(self.trip.lock().unwrap_or_else(|e| e.into_inner()).home_revision)
    }

    /// A Redis call on the order path succeeded.
    pub fn record_success(&self) {
        if self.failures_in_a_row.load(Ordering::Relaxed) != 0 {
            self.failures_in_a_row.store(0, Ordering::Relaxed);
            *self.failing_since.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }

    /// A Redis call on the order path failed with `fault`. Returns true when this failure
    /// tripped the breaker.
    pub fn record_failure(&self, fault: RedisFault, home_revision: u64) -> bool {
        let n = self.failures_in_a_row.fetch_add(1, Ordering::Relaxed) + 1;
        let failing_for = {
            let mut since = self.failing_since.lock().unwrap_or_else(|e| e.into_inner());
            since.get_or_insert_with(std::time::Instant::now).elapsed()
        };
        if self.config.trip_after == 0 || n < self.config.trip_after || failing_for < self.config.grace {
            return false;
        }
        if self.state.compare_exchange(CLOSED, OPEN, Ordering::AcqRel, Ordering::Acquire).is_err() {
            return false;
        }
        let mut trip = self.trip.lock().unwrap_or_else(|e| e.into_inner());
        *trip = Trip {
            reason: Some(format!("{n} Redis {} failures in a row", fault.as_str())),
            at: Some(chrono::Utc::now().naive_utc()),
            home_revision,
            good_probes: 0,
        };
        true
    }

    /// A probe of a tripped breaker answered (`ok`) or not. Healthy only after
    /// `healthy_probes` good answers in a row; one bad answer starts over.
    pub fn record_probe(&self, ok: bool) {
        if !self.is_tripped() {
            return;
        }
        let mut trip = self.trip.lock().unwrap_or_else(|e| e.into_inner());
        if ok {
            trip.good_probes += 1;
            if trip.good_probes >= self.config.healthy_probes {
                self.state.store(HALF_OPEN, Ordering::Release);
            }
        } else {
            trip.good_probes = 0;
            self.state.store(OPEN, Ordering::Release);
        }
    }

    /// Closes a tripped breaker when the guided exit has run: the home's row is `NORMAL`
    /// at a revision newer than the trip, and Redis answers. Returns true when it closed.
    pub fn close_after_exit(&self, home_normal: bool, home_revision: u64) -> bool {
        if self.state.load(Ordering::Acquire) != HALF_OPEN || !home_normal {
            return false;
        }
        let mut trip = self.trip.lock().unwrap_or_else(|e| e.into_inner());
        if home_revision <= trip.home_revision {
            return false;
        }
        *trip = Trip::default();
        self.failures_in_a_row.store(0, Ordering::Relaxed);
        self.state.store(CLOSED, Ordering::Release);
        true
    }

    pub fn report(&self) -> BreakerReport {
        let trip = self.trip.lock().unwrap_or_else(|e| e.into_inner());
        let state = match self.state.load(Ordering::Acquire) {
            CLOSED => "CLOSED",
            OPEN => "OPEN",
            _ => "HALF_OPEN",
        };
        BreakerReport { state, reason: trip.reason.clone(), tripped_at: trip.at }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn breaker() -> Breaker {
        Breaker::new(BreakerConfig {
            trip_after: 3,
            probe_interval: Duration::from_millis(1),
            healthy_probes: 2,
            grace: Duration::ZERO,
        })
    }

    #[test]
    fn within_its_grace_it_does_not_trip_however_many_failures() {
        let b = Breaker::new(BreakerConfig { grace: Duration::from_millis(150), ..BreakerConfig::default() });
        for _ in 0..50 {
            assert!(!b.record_failure(RedisFault::Timeout, 1));
        }
        std::thread::sleep(Duration::from_millis(160));
        assert!(b.record_failure(RedisFault::Timeout, 1), "past the grace, the next failure trips it");
    }

    #[test]
    fn a_success_starts_the_grace_over() {
        let b = Breaker::new(BreakerConfig { grace: Duration::from_millis(100), ..BreakerConfig::default() });
        for _ in 0..10 {
            b.record_failure(RedisFault::Connection, 1);
        }
        std::thread::sleep(Duration::from_millis(110));
        b.record_success();
        for _ in 0..10 {
            assert!(!b.record_failure(RedisFault::Connection, 1), "a new run of failures has a new grace");
        }
    }

    #[test]
    fn it_trips_only_after_enough_failures_in_a_row() {
        let b = breaker();
        assert!(!b.record_failure(RedisFault::Timeout, 1));
        assert!(!b.record_failure(RedisFault::Timeout, 1));
        b.record_success();
        assert!(!b.record_failure(RedisFault::Connection, 1));
        assert!(!b.record_failure(RedisFault::Connection, 1));
        assert!(!b.is_tripped());
        assert!(b.record_failure(RedisFault::Connection, 1));
        assert!(b.is_tripped());
        assert_eq!(b.report().state, "OPEN");
        assert!(!b.record_failure(RedisFault::Connection, 1), "trips once");
    }

    #[test]
    fn a_tripped_breaker_stays_tripped_until_redis_is_healthy_and_a_newer_normal_arrives() {
        let b = breaker();
        for _ in 0..3 {
            b.record_failure(RedisFault::Timeout, 7);
        }
        b.record_probe(true);
        assert_eq!(b.report().state, "OPEN", "one good probe is not enough");
        b.record_probe(false);
        b.record_probe(true);
        assert_eq!(b.report().state, "OPEN", "a bad probe starts the count over");
        b.record_probe(true);
        assert_eq!(b.report().state, "HALF_OPEN");
        assert!(!b.close_after_exit(true, 7), "the revision it tripped under does not close it");
        assert!(!b.close_after_exit(false, 9), "a newer DEGRADED does not close it");
        assert!(b.is_tripped());
        assert!(b.close_after_exit(true, 9));
        assert!(!b.is_tripped());
        assert_eq!(b.report().state, "CLOSED");
    }

    #[test]
    fn only_reachability_errors_count() {
        let script = redis::RedisError::from((redis::ErrorKind::ResponseError, "ERR bad script"));
        assert_eq!(classify(&script), None);
        let refused = redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert_eq!(classify(&refused), Some(RedisFault::Connection));
        let slow = redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::TimedOut));
        assert_eq!(classify(&slow), Some(RedisFault::Timeout));
    }
}
