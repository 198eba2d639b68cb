//! The ledger reconciliation, with a `ledger-progress` event after every chunk.

use serde::Serialize;
use stockguard_core::recon::ledger::{reconcile, LedgerOptions, LedgerReport};
use stockguard_core::sale::Capability;
use tauri::{AppHandle, Emitter as _, State};

use crate::error::DesktopError;
use crate::state::AppState;

pub const PROGRESS_EVENT: &str = "ledger-progress";

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct LedgerProgress {
    pub done: u64,
    pub total: u64,
}

/// Runs the ledger check on the replica when the profile has one, else on the primary.
#[tauri::command(rename_all = "snake_case")]
pub async fn run_ledger(app: AppHandle, state: State<'_, AppState>) -> Result<LedgerReport, DesktopError> {
    let live = state.live().await?;
    let conns = live.ours(Capability::LedgerCheck)?;
    let replica = live.sale.replica();
    let pool = replica.unwrap_or(&conns.mysql);
    let mut progress = |done, total| {
        let _ = app.emit(PROGRESS_EVENT, LedgerProgress { done, total });
    };
    Ok(reconcile(pool, &LedgerOptions::default(), replica.is_some(), &mut progress).await?)
}
