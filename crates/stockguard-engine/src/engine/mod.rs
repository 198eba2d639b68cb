//! The sale engine: the reference article's order path.
//!
//! - [`reserve`] + `reserve.lua`: the one atomic Redis step (deduct, in-flight entry, buyer
//!   count, stream message), called by SHA.
//! - [`order_no`]: order numbers unique across instances (instance tags handed out by the DB).
//! - [`persist`]: a batch of reservations into the DB in one transaction, exactly once.
//! - [`ledger_write`]: the conditional deduction and the order insert, shared by every path.
//! - [`consumer`]: the `persist` group consumers: read, reclaim, persist.
//! - [`close`]: timeout close and cancel, one compare-and-set path returning stock once.
//! - [`relay`] + `release.lua`: pending releases applied to Redis, each at most once.
//! - [`replicas`]: with replicas (found by default), a reservation is answered "accepted"
//!   only once a replica has it (`WAIT`, one per master for many) or the engine wrote the
//!   order to the DB itself: no loss on failover. The gate and its guarantee are there;
//!   [`vouched`] reserves through it and, when no replica vouched in time, has the order
//!   written to the DB by [`write_through`], in one batch with the others no replica vouched
//!   for, after what the product's stream still holds ([`backlog`]).
//! - [`history`]: whether a product's Redis history holds every reservation the DB has; when
//!   a failover lost some, its orders are written to the DB before they are answered.
//! - [`degraded`]: the DB-only order path of degraded mode.
//! - [`switching`]: reading and applying the degrade switch, heartbeats, breaker escalation.
//! - [`breaker`]: the Redis circuit breaker (trips by itself, closes only after the guided
//!   exit).
//! - [`limits`] + `rate.lua`: per-user (Redis) and per-instance (token bucket) rate limits.
//! - [`metrics`]: Prometheus metrics.
//! - [`state`]: what the handlers of one instance share (pools, config, product cache).
//! - [`http`]: the HTTP API.
//! - [`run`]: one instance: consumers + API until shutdown.
//! - [`backoff`]: how the background loops wait and what they log while a server is down.

pub mod backlog;
pub mod backoff;
pub mod breaker;
pub mod close;
pub mod consumer;
pub mod degraded;
pub mod history;
pub mod http;
pub mod ledger_write;
pub mod limits;
pub mod metrics;
pub mod order_no;
pub mod persist;
pub mod relay;
pub mod replicas;
pub mod reserve;
pub mod run;
pub mod state;
pub mod switching;
pub mod vouched;
pub mod write_through;

pub use reserve::{ReserveOutcome, ReserveRequest, Reserver};

/// True when a statement failed on a unique key.
pub(crate) use stockguard_core::step::is_unique_violation as is_duplicate;
