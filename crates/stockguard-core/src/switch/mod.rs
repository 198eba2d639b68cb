//! The degrade switch (contract section 5): whether orders go through Redis or straight to
//! the DB, per scope, stored in MySQL so it works when Redis does not.
//!
//! - [`mode`]: modes, scopes, and the switch as an engine applies it ([`SwitchView`]).
//! - [`store`]: reading and changing it; every change is a revision and an audit row.
//! - [`acks`]: engine heartbeats; "applied by k of n live instances in N ms".
//! - [`toggle`]: status, and entering DB mode with the fleet's acknowledgements.
//! - [`exit`] + [`buyers`] + [`idem`]: the guided exit from DB mode (pause, drain, rebuild,
//!   resume, verify).
//!
//! The engine side (polling, applying, the circuit breaker) is in `engine::switching` and
//! `engine::breaker`.

pub mod acks;
pub mod buyers;
pub mod exit;
pub mod idem;
pub mod mode;
pub mod store;
pub mod toggle;

pub use acks::{Acknowledgement, InstanceAck};
pub use exit::{guided_exit, ExitOptions, ExitReport, ExitStep, ProductDrift, RebuildPath, ScopeLeft};
pub use mode::{Home, Mode, Scope, SwitchView};
pub use store::{Change, Changer, ScopeState};
pub use toggle::{enter_db_mode, status, SwitchStatus, Toggled};

use crate::recon::ReconError;
use crate::rewrite::{Outcome, RewriteError};

#[derive(Debug, thiserror::Error)]
pub enum SwitchError {
    #[error(transparent)]
    Refused(#[from] crate::action::Refused),
    #[error("a reason is required (it goes to the audit log)")]
    NoReason,
    #[error("production: confirm by typing the scope (--confirm {0})")]
    ConfirmationRequired(String),
    #[error("Redis does not answer, so the exit cannot start: {0}")]
    RedisUnreachable(#[source] redis::RedisError),
    #[error("these live engines still cannot reach Redis (breaker OPEN): {0:?}; wait until they report HALF_OPEN")]
    InstancesCannotReachRedis(Vec<String>),
    #[error("revision {revision} was applied by only {applied} of {live} live instances in time")]
    NotAcknowledged { revision: u64, applied: usize, live: usize },
    #[error("{0} reservations are still in flight in Redis; the consumers did not persist them in time")]
    NotDrained(i64),
    #[error("the rewrite of product {0} failed: {1}")]
    Rewrite(u64, #[source] Box<RewriteError>),
    #[error("the batch rewrite of {count} products from product {first} on failed: {source}")]
    RewriteBatch { first: u64, count: usize, source: Box<RewriteError> },
    #[error("the rewrite of product {0} ended {1:?}; Redis stock was not rebuilt")]
    RewriteNotClean(u64, Outcome),
    #[error(
        "{scope} was changed meanwhile (now revision {found}, {mode} by {changed_by:?}; expected revision {expected}): left as it is"
    )]
    ChangedMeanwhile { scope: Scope, expected: u64, found: u64, mode: Mode, changed_by: String },
    #[error("after the exit, Redis stock drifts from the DB for products {0:?}")]
    DriftAfterExit(Vec<ProductDrift>),
    #[error("the guided exit failed: {cause}; {left}")]
    ExitFailed { cause: Box<SwitchError>, left: ScopeLeft },
    #[error("the switch table holds something unexpected: {0}")]
    Corrupt(String),
    #[error(
        "the degrade switch could not be read within {0:?}; an engine does not take orders without knowing its mode"
    )]
    ReadTimedOut(std::time::Duration),
    #[error(transparent)]
    Recon(#[from] ReconError),
    #[error(transparent)]
    Db(#[from] crate::step::StepFailed),
    #[error("Redis: {0}")]
    Redis(#[from] redis::RedisError),
}
