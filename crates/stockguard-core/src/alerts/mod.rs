//! Alerts with acknowledgement: what fires (a confirmed drift, an oversold product, a ledger
//! that disagrees with itself, a missing stock key, a backlog past its threshold, open
//! breakers), since when, and who took it, why and until when.
//!
//! - [`conditions`]: which alerts a reading raises (a pure function shared by the CLI, the
//!   headless watcher and the desktop app).
//! - [`now`]: the alerts firing now, for a one-off command (two readings, the backlog).
//! - [`onsets`]: when each alert began firing (its first reading, kept by its key while it
//!   fires), so every alert has an age.
//! - [`state`]: what the desk shows of a firing alert (its onset, its open acknowledgement).
//! - [`acks`]: acknowledging one (the account is the server's word), and settling: an
//!   acknowledgement closes by itself once its alert clears or its time is up, so a forgotten
//!   acknowledgement never hides the next incident. Every acknowledgement and every close
//!   leaves an audit row.

pub mod acks;
pub mod conditions;
pub mod now;
pub mod onsets;
pub mod state;

pub use crate::profile::thresholds::Thresholds;
pub use conditions::{evaluate, Alert, AlertKind, Signals};
pub use onsets::Onsets;
pub use state::{Acknowledgement, AlertState};

#[derive(Debug, thiserror::Error)]
pub enum AlertError {
    #[error("a reason is required (it goes to the audit log)")]
    NoReason,
    #[error(transparent)]
    Refused(#[from] crate::action::Refused),
    #[error("no alert `{0}` is firing now")]
    NotFiring(String),
    #[error("alert `{0}` is already acknowledged")]
    AlreadyAcknowledged(String),
    #[error(transparent)]
    Recon(#[from] crate::recon::ReconError),
    #[error("the degrade switch could not be read: {0}")]
    Switch(#[from] crate::switch::SwitchError),
    #[error("Redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
}
