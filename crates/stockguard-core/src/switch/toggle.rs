//! What the console and CLI do with the switch: look at it, and enter DB mode (leaving it is
//! the guided [`exit`](super::exit)).

use std::time::Duration;

use serde::Serialize;

use super::acks::{self, Acknowledgement};
use super::mode::{Mode, Scope};
use super::store::{self, Change, Changer, ScopeState};
use super::SwitchError;
use crate::connect::Connections;

/// The switch and the fleet at a glance.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SwitchStatus {
    /// Every scope ever set, global first.
    pub scopes: Vec<ScopeState>,
    /// Where the instances stand on the newest revision.
    pub ack: Acknowledgement,
}

pub async fn status(conns: &Connections, stale_after: Duration) -> Result<SwitchStatus, SwitchError> {
    let scopes = store::scopes(&conns.mysql).await?;
    let newest = scopes.iter().map(|s| s.revision).max().unwrap_or(0);
    let ack = acks::acknowledgement(&conns.mysql, newest, stale_after).await?;
    Ok(SwitchStatus { scopes, ack })
}

/// The change and how the fleet took it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Toggled {
    pub change: Change,
    pub ack: Acknowledgement,
}

/// Puts `scope` in DB mode and waits (up to `ack_timeout`) until every live instance
/// applied it. `progress` sees each poll of the acknowledgements.
pub async fn enter_db_mode(
    conns: &Connections,
    scope: Scope,
    reason: &str,
    ack_timeout: Duration,
    stale_after: Duration,
    progress: &(dyn Fn(&Acknowledgement) + Sync),
) -> Result<Toggled, SwitchError> {
    let changer = Changer::person(&conns.settings)?;
    let change = store::set(&conns.mysql, &changer, scope, Mode::Degraded, reason).await?;
    let ack = acks::wait_applied(&conns.mysql, change.revision, stale_after, ack_timeout, progress).await?;
    Ok(Toggled { change, ack })
}
