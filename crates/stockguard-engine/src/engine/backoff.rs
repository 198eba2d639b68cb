//! How a background loop waits and speaks while a server is down.
//!
//! Each try that fails waits twice as long as the one before, from the loop's normal cadence
//! (the floor) up to a cap; the first success goes back to the floor. The outage is told, not
//! each try: its first failure at warn with the error, repeats at debug, one reminder at warn
//! per [`REMIND_EVERY`] of outage (how many failures, for how long), and its end at info
//! ("recovered after N failures, outage X s").
//!
//! The policy is pure ([`Backoff::on_failure`], [`Backoff::on_success`], [`Backoff::due`]
//! take the time as an argument) so that it is tested without sleeping; [`Backoff::failed`]
//! and [`Backoff::succeeded`] apply it and log.
//!
//! The doubling is written here rather than taken from `backon`: its exponential backoff
//! multiplies through `f32` seconds (20 ms doubles to 39.999999 ms), so a wait of k floors
//! would land a hair off the k-th tick of a loop that ticks at its floor, and the whole of
//! the arithmetic is `min(2 * wait, cap)`.
//!
//! No jitter. Jitter spreads many clients' retries so that a recovering server is not hit by
//! all of them at once; here each instance has a handful of loops, each trying at most once
//! per cap (seconds) once the outage is a few tries old, so synchronised retries add up to a
//! few cheap queries. Jitter would also make the number of tries in an outage, which tests
//! bound, a matter of chance (and `backon`'s adds up to the whole delay, past the cap).

use std::fmt::Display;
use std::time::Duration;

use tokio::time::Instant;

/// A long outage is recalled at warn level at most this often.
pub const REMIND_EVERY: Duration = Duration::from_secs(30);

/// The most warnings one loop logs for an outage lasting `outage`: its first failure, then one
/// reminder per [`REMIND_EVERY`].
pub fn most_warnings(outage: Duration) -> u64 {
    1 + (outage.as_nanos() / REMIND_EVERY.as_nanos()) as u64
}

/// What a loop says about one failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Say {
    /// The first failure of an outage: warn, with the error.
    Warn,
    /// The outage is already told: debug only.
    Quiet,
    /// Another [`REMIND_EVERY`] of outage: one warn, with how many failures and how long.
    Remind { failures: u64, outage: Duration },
}

/// What to do after a failure: say something (or not), and wait before the next try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub say: Say,
    pub wait: Duration,
}

/// An outage that ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recovery {
    pub failures: u64,
    pub outage: Duration,
}

#[derive(Debug, Clone, Copy)]
struct Outage {
    since: Instant,
    failures: u64,
    /// The last warning (the first failure, or the last reminder).
    warned: Instant,
    /// The next try, for a loop that keeps ticking at its floor ([`Backoff::due`]).
    retry_at: Instant,
}

/// One background loop's retry policy and what it knows of the outage under way.
#[derive(Debug)]
pub struct Backoff {
    /// What the loop does, as the log names it: "persist pass".
    what: &'static str,
    /// What holds meanwhile, said with the first failure: "keeping the last known mode".
    meanwhile: Option<&'static str>,
    floor: Duration,
    cap: Duration,
    /// The wait after the next failure.
    next_wait: Duration,
    outage: Option<Outage>,
}

impl Backoff {
    /// A loop named `what` whose normal cadence is `floor`, waiting at most `cap` (never less
    /// than the floor) between failing tries.
    pub fn new(what: &'static str, floor: Duration, cap: Duration) -> Self {
        let cap = cap.max(floor);
        Self { what, meanwhile: None, floor, cap, next_wait: floor, outage: None }
    }

    /// What holds while the loop fails, said with the outage's first warning.
    pub fn meanwhile(self, meanwhile: &'static str) -> Self {
        Self { meanwhile: Some(meanwhile), ..self }
    }

    /// A try that started at `now` failed: what to say and how long to wait.
    pub fn on_failure(&mut self, now: Instant) -> Verdict {
        let wait = self.next_wait;
        self.next_wait = wait.saturating_mul(2).min(self.cap);
        let retry_at = now + wait;
        let say = match &mut self.outage {
            None => {
                self.outage = Some(Outage { since: now, failures: 1, warned: now, retry_at });
                Say::Warn
            }
            Some(outage) => {
                outage.failures += 1;
                outage.retry_at = retry_at;
                if now.duration_since(outage.warned) >= REMIND_EVERY {
                    outage.warned = now;
                    Say::Remind { failures: outage.failures, outage: now.duration_since(outage.since) }
                } else {
                    Say::Quiet
                }
            }
        };
        Verdict { say, wait }
    }

    /// A try succeeded at `now`: the outage it ends, if there was one. The wait is back at
    /// the floor.
    pub fn on_success(&mut self, now: Instant) -> Option<Recovery> {
        let outage = self.outage.take()?;
        self.next_wait = self.floor;
        Some(Recovery { failures: outage.failures, outage: now.duration_since(outage.since) })
    }

    /// For a loop that keeps ticking at its floor (it has other work): whether this tick, at
    /// `now`, should try. Always outside an outage; in one, once the wait has passed. Pass the
    /// instant the tick was due (what `Interval::tick` returns), not when it was served, so
    /// that a wait of k floors is exactly k ticks.
    pub fn due(&self, now: Instant) -> bool {
        self.outage.is_none_or(|o| now >= o.retry_at)
    }

    /// Notes a failure of the try started at `started` and logs what the policy says; returns
    /// how long to wait.
    pub fn failed(&mut self, started: Instant, error: &dyn Display) -> Duration {
        let Verdict { say, wait } = self.on_failure(started);
        let what = self.what;
        match say {
            Say::Warn => {
                let meanwhile = self.meanwhile.map(|m| format!("; {m}")).unwrap_or_default();
                tracing::warn!(
                    task = what,
                    %error,
                    "{what} failed{meanwhile}; retrying from every {:?} up to every {:?}, quietly until it recovers",
                    self.floor,
                    self.cap
                );
            }
            Say::Quiet => tracing::debug!(task = what, %error, retry_in = ?wait, "{what} failed again"),
            Say::Remind { failures, outage } => tracing::warn!(
                task = what,
                %error,
                failures,
                "{what} still failing: {failures} failures in {:.0} s",
                outage.as_secs_f64()
            ),
        }
        wait
    }

    /// Notes a success at `now`; logs the end of an outage.
    pub fn succeeded(&mut self, now: Instant) {
        if let Some(Recovery { failures, outage }) = self.on_success(now) {
            let what = self.what;
            tracing::info!(
                task = what,
                failures,
                "{what} recovered after {failures} failures, outage {:.1} s",
                outage.as_secs_f64()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn persist() -> Backoff {
        Backoff::new("persist pass", 20 * MS, 2000 * MS)
    }

    /// Fails at `start`, then at each wait after, until `outage` has passed; the verdicts.
    fn outage_of(b: &mut Backoff, start: Instant, outage: Duration) -> Vec<Verdict> {
        let mut now = start;
        let mut verdicts = Vec::new();
        while now < start + outage {
            let v = b.on_failure(now);
            now += v.wait;
            verdicts.push(v);
        }
        verdicts
    }

    #[test]
    fn the_wait_doubles_from_the_floor_up_to_the_cap() {
        let mut b = persist();
        let t = Instant::now();
        let waits: Vec<u64> = (0..10).map(|_| b.on_failure(t).wait.as_millis() as u64).collect();
        assert_eq!(waits, [20, 40, 80, 160, 320, 640, 1280, 2000, 2000, 2000]);
    }

    #[test]
    fn only_the_first_failure_of_an_outage_is_a_warning() {
        let mut b = persist();
        let says: Vec<Say> = outage_of(&mut b, Instant::now(), Duration::from_secs(10)).iter().map(|v| v.say).collect();
        assert_eq!(says[0], Say::Warn);
        assert!(says[1..].iter().all(|s| *s == Say::Quiet), "{says:?}");
    }

    #[test]
    fn a_ten_second_outage_costs_the_persist_loop_eleven_tries_not_five_hundred() {
        let mut b = persist();
        let tries = outage_of(&mut b, Instant::now(), Duration::from_secs(10)).len();
        // Waits of 20 ms .. 1.28 s add up to 2.54 s; then one try every 2 s.
        assert_eq!(tries, 11);
    }

    #[test]
    fn a_long_outage_is_recalled_once_per_thirty_seconds_with_its_count_and_length() {
        let mut b = Backoff::new("relay", 500 * MS, 5000 * MS);
        let t = Instant::now();
        let verdicts = outage_of(&mut b, t, Duration::from_secs(95));
        let reminders: Vec<(u64, u64)> = verdicts
            .iter()
            .filter_map(|v| match v.say {
                Say::Remind { failures, outage } => Some((failures, outage.as_secs())),
                _ => None,
            })
            .collect();
        // Tries at 0, 0.5, 1.5, 3.5, 7.5, then every 5 s: 32.5 s is the 10th try.
        assert_eq!(reminders, [(10, 32), (16, 62), (22, 92)]);
        let warnings = verdicts.iter().filter(|v| v.say != Say::Quiet).count() as u64;
        assert_eq!(warnings, most_warnings(Duration::from_secs(95)));
    }

    #[test]
    fn recovery_tells_the_failures_and_the_outage_and_starts_again_from_the_floor() {
        let mut b = persist();
        let t = Instant::now();
        for i in 0..5 {
            b.on_failure(t + i * 100 * MS);
        }
        assert_eq!(b.on_success(t + 3 * 1000 * MS), Some(Recovery { failures: 5, outage: 3 * 1000 * MS }));
        let next = b.on_failure(t + 4 * 1000 * MS);
        assert_eq!(next, Verdict { say: Say::Warn, wait: 20 * MS }, "a new outage, told again");
    }

    #[test]
    fn a_success_outside_an_outage_says_nothing() {
        let mut b = persist();
        assert_eq!(b.on_success(Instant::now()), None);
    }

    #[test]
    fn a_loop_ticking_at_its_floor_skips_the_ticks_inside_the_wait() {
        let floor = 100 * MS;
        let mut b = Backoff::new("switch read", floor, 1000 * MS);
        let t = Instant::now();
        assert!(b.due(t), "outside an outage every tick tries");
        let tried: Vec<u32> = (0..20u32)
            .filter(|&k| {
                let tick = t + k * floor;
                b.due(tick) && {
                    b.on_failure(tick);
                    true
                }
            })
            .collect();
        // Waits of 1, 2, 4, 8, then 10 ticks.
        assert_eq!(tried, [0, 1, 3, 7, 15]);
    }

    #[test]
    fn a_cap_below_the_floor_waits_the_floor() {
        let mut b = Backoff::new("escalation", 100 * MS, 10 * MS);
        let t = Instant::now();
        assert_eq!((b.on_failure(t).wait, b.on_failure(t).wait), (100 * MS, 100 * MS));
    }
}
