//! The audit screen: every write action, newest first, filtered.

use stockguard_core::audit::{self, AuditFilter, AuditRecord};
use tauri::State;

use crate::error::DesktopError;
use crate::state::AppState;

#[tauri::command(rename_all = "snake_case")]
pub async fn audit_log(state: State<'_, AppState>, filter: AuditFilter) -> Result<Vec<AuditRecord>, DesktopError> {
    Ok(audit::query(state.live().await?.records()?, &filter).await?)
}
