//! The health strip of the console: how fast each server answers right now, how many
//! reservation messages wait for the persist step, and how many released units wait to go
//! back to Redis.
//!
//! It also says which mode the sale is in (the global row of the degrade switch) and how many
//! live engine instances applied its newest revision, and what an ACCEPTED answer survives
//! (the weakest guarantee the sale's live engines report in their heartbeats), and what the
//! connection travels over: a production sale reached in clear names its servers
//! ([`Health::in_clear`]), so nobody runs a sale on an open wire unawares.

use std::time::Instant;

use serde::Serialize;

use crate::connect::Connections;
use crate::guarantee::{self, Guarantee};
use crate::recon::Reading;
use crate::switch::acks::InstanceAck;
use crate::switch::exit::DEFAULT_STALE_AFTER;
use crate::switch::{Mode, Scope};
use crate::tls::Transport;

/// One health sample, taken right after a board reading.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Health {
    /// One `PING` round trip.
    pub redis_ms: f64,
    /// One `SELECT 1` round trip.
    pub db_ms: f64,
    /// Reservation messages not yet persisted (undelivered plus unacknowledged), all products.
    pub stream_backlog: i64,
    /// Units returned in the DB and not yet returned to Redis, all products (from the reading).
    pub pending_releases: i64,
    /// The sale's mode (the switch's global row; NORMAL when never set).
    pub engine_mode: Mode,
    /// Product scopes in a mode other than NORMAL.
    pub products_off_normal: usize,
    /// Live engine instances, and how many of them applied the switch's newest revision.
    pub engines_live: usize,
    pub engines_applied: usize,
    /// Live engine instances whose Redis breaker is not closed (they sell through the DB).
    pub breakers_open: Vec<String>,
    /// What an ACCEPTED answer survives on this sale: the weakest that its live engines'
    /// heartbeats report (`None`: no live engine says).
    pub accepted_guarantee: Option<Guarantee>,
    /// Live engines of the sale whose accepted orders a failover may lose (opted out).
    pub engines_may_lose_accepted: usize,
    /// What the console's connection uses (TLS mode and cipher); each door words it in its
    /// language (its `Display` is the English line).
    pub transport: Transport,
    /// The servers a production sale is reached in clear ("MySQL", "Redis"); empty when all
    /// speak TLS, or the sale is not production.
    pub in_clear: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum HealthError {
    #[error("DB did not answer: {0}")]
    Db(#[from] sqlx::Error),
    #[error("Redis did not answer: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("the degrade switch could not be read: {0}")]
    Switch(#[from] crate::switch::SwitchError),
}

/// Times one round trip to each server and sums the backlog over the products of `readings`.
pub async fn probe(conns: &Connections, readings: &[Reading]) -> Result<Health, HealthError> {
    let mut redis = conns.redis.clone();
    let started = Instant::now();
    let _: String = redis::cmd("PING").query_async(&mut redis).await?;
    let redis_ms = started.elapsed().as_secs_f64() * 1000.0;
    let started = Instant::now();
    let _: i32 = sqlx::query_scalar("SELECT 1").fetch_one(&conns.mysql).await?;
    let db_ms = started.elapsed().as_secs_f64() * 1000.0;
    let products: Vec<u64> = readings.iter().filter_map(|r| r.product_id.as_num()).collect();
    let stream_backlog = crate::backlog::sample(&mut redis, &conns.keys, &products).await?.messages;
    let switch = crate::switch::status(conns, DEFAULT_STALE_AFTER).await?;
    let mode_of = |scope: Scope| switch.scopes.iter().find(|s| s.scope == scope).map(|s| s.mode);
    Ok(Health {
        redis_ms,
        db_ms,
        stream_backlog,
        pending_releases: readings.iter().map(|r| r.pending_release).sum(),
        engine_mode: mode_of(Scope::Global).unwrap_or(Mode::Normal),
        products_off_normal: switch
            .scopes
            .iter()
            .filter(|s| s.scope.product_id().is_some() && s.mode != Mode::Normal)
            .count(),
        engines_live: switch.ack.live,
        engines_applied: switch.ack.applied,
        breakers_open: crate::alerts::now::open_breakers(&switch.ack.instances),
        accepted_guarantee: guarantee::weakest(sale_guarantees(&switch.ack.instances)),
        engines_may_lose_accepted: sale_guarantees(&switch.ack.instances).filter(|g| g.may_lose_accepted()).count(),
        transport: conns.transport.clone(),
        in_clear: conns.transport.in_clear_for(conns.settings.environment),
    })
}

/// The guarantees the sale's own live engines report (a drill rig's engines sell only its
/// own products, and say nothing of the sale's buyers).
fn sale_guarantees(instances: &[InstanceAck]) -> impl Iterator<Item = Guarantee> + '_ {
    instances.iter().filter(|i| i.live && i.home == Scope::Global).filter_map(|i| i.accepted_guarantee)
}
