//! The alerts panel: what fires now, acknowledging one, and the language the tray and the
//! notifications speak.

use chrono::Utc;
use stockguard_core::adapter::AdapterError;
use stockguard_core::alerts::acks;
use stockguard_core::alerts::Acknowledgement;
use stockguard_core::lang::Lang;
use tauri::{AppHandle, State};

use crate::alert_desk::{self, AlertDesk, AlertsUpdate};
use crate::error::{DesktopError, MessageCode, Said};
use crate::state::AppState;

/// The alerts of the last tick (`None` before the first).
#[tauri::command(rename_all = "snake_case")]
pub fn alerts_current(desk: State<'_, AlertDesk>) -> Option<AlertsUpdate> {
    desk.latest()
}

/// Acknowledges a firing alert: the server records who, `reason` says why, `minutes` until
/// when (none: until it clears). The window, the tray and the desktop hear of it at once.
#[tauri::command(rename_all = "snake_case")]
pub async fn alert_acknowledge(
    app: AppHandle,
    state: State<'_, AppState>,
    desk: State<'_, AlertDesk>,
    key: String,
    reason: String,
    minutes: Option<u32>,
) -> Result<Acknowledgement, DesktopError> {
    if minutes == Some(0) {
        let m = "an acknowledgement lasts at least one minute";
        return Err(DesktopError::Invalid(Said::new(MessageCode::AckTooShort, &[], m)));
    }
    let live = state.live().await?;
    let until = minutes.map(|m| Utc::now().naive_utc() + chrono::Duration::minutes(i64::from(m)));
    let firing = desk.firing();
    let desk_at = live.alert_acks().ok_or_else(|| DesktopError::from(AdapterError::NoStateDb))?;
    let ack = acks::acknowledge_at(desk_at, &firing, &key, &reason, until).await?;
    alert_desk::publish(&app, &live, Utc::now(), firing, None).await;
    Ok(ack)
}

/// The window's language, for what the app says outside it.
#[tauri::command(rename_all = "snake_case")]
pub fn set_language(desk: State<'_, AlertDesk>, lang: Lang) {
    desk.set_language(lang);
}
