//! The degrade switch: its state and the fleet's acknowledgements, DB mode on (with a
//! `degrade-ack` event per poll of the acknowledgements), and the guided exit (with a
//! `degrade-step` event per step).

use std::time::Duration;

use stockguard_core::sale::Capability;
use stockguard_core::switch::exit::DEFAULT_STALE_AFTER;
use stockguard_core::switch::{self, ExitOptions, ExitReport, Scope, SwitchStatus, Toggled};
use tauri::{AppHandle, Emitter as _, State};

use crate::error::DesktopError;
use crate::state::AppState;

pub const ACK_EVENT: &str = "degrade-ack";
pub const STEP_EVENT: &str = "degrade-step";

/// How long the window waits for every live instance to apply a change.
const ACK_TIMEOUT: Duration = Duration::from_secs(5);

fn scope_of(product: Option<u64>) -> Scope {
    product.map_or(Scope::Global, Scope::Product)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn degrade_status(state: State<'_, AppState>) -> Result<SwitchStatus, DesktopError> {
    let live = state.live().await?;
    Ok(switch::status(live.ours(Capability::Degrade)?, DEFAULT_STALE_AFTER).await?)
}

/// Sends the scope's orders straight to the DB and waits for the instances to apply it.
#[tauri::command(rename_all = "snake_case")]
pub async fn degrade_on(
    app: AppHandle,
    state: State<'_, AppState>,
    product: Option<u64>,
    reason: String,
) -> Result<Toggled, DesktopError> {
    let live = state.live().await?;
    let progress = |ack: &switch::Acknowledgement| {
        let _ = app.emit(ACK_EVENT, ack);
    };
    Ok(switch::enter_db_mode(
        live.ours(Capability::Degrade)?,
        scope_of(product),
        &reason,
        ACK_TIMEOUT,
        DEFAULT_STALE_AFTER,
        &progress,
    )
    .await?)
}

/// The guided exit back to Redis. `confirm`: the scope typed again (needed on production).
#[tauri::command(rename_all = "snake_case")]
pub async fn degrade_exit(
    app: AppHandle,
    state: State<'_, AppState>,
    product: Option<u64>,
    reason: String,
    confirm: Option<String>,
) -> Result<ExitReport, DesktopError> {
    let live = state.live().await?;
    let opts = ExitOptions { confirm, ack_timeout: ACK_TIMEOUT, ..ExitOptions::new(scope_of(product), &reason) };
    let progress = |step: &switch::ExitStep| {
        let _ = app.emit(STEP_EVENT, step);
    };
    Ok(switch::guided_exit(live.ours(Capability::Degrade)?, &opts, &progress).await?)
}
