//! The compensation screen: the inbox, a case, its plan, the workflow's steps, execution with
//! a `compensation-progress` event per line, and the CSV export. Every step is taken as the
//! profile's MySQL account, and the database decides whether that account may take it. On a
//! sale read over its adapter the cases are its state database's, and they list the sale's
//! own orders (`compensation::over_adapter`).

use serde::Serialize;
use stockguard_core::compensation::execute::Execution;
use stockguard_core::compensation::open::Opened;
use stockguard_core::compensation::plan::{set_plan, Choice, Lines, Planned};
use stockguard_core::compensation::read::{list, show, CaseSummary};
use stockguard_core::compensation::workflow::{take, StepKind, Stepped};
use stockguard_core::compensation::{export, Action, Case, CaseStatus, LineReason};
use tauri::{AppHandle, Emitter as _, State};

use crate::error::{DesktopError, MessageCode, Said};
use crate::state::AppState;

pub const PROGRESS_EVENT: &str = "compensation-progress";

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct CompensationProgress {
    pub case_id: u64,
    pub done: usize,
    pub total: usize,
    pub order_no: String,
}

#[tauri::command(rename_all = "snake_case")]
pub async fn compensation_list(
    state: State<'_, AppState>,
    status: Option<CaseStatus>,
) -> Result<Vec<CaseSummary>, DesktopError> {
    Ok(list(state.live().await?.records()?, status).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn compensation_show(state: State<'_, AppState>, case_id: u64) -> Result<Case, DesktopError> {
    Ok(show(state.live().await?.records()?, case_id).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn compensation_open(
    state: State<'_, AppState>,
    product_id: stockguard_core::ProductId,
) -> Result<Opened, DesktopError> {
    let live = state.live().await?;
    Ok(live.sale.open_case(&product_id).await?)
}

/// The plan by reason: what every oversold line gets, what every withdrawn line gets.
#[tauri::command(rename_all = "snake_case")]
pub async fn compensation_plan(
    state: State<'_, AppState>,
    case_id: u64,
    oversold: Option<Action>,
    withdrawn: Option<Action>,
    coupon_cents: Option<i64>,
    note: String,
) -> Result<Planned, DesktopError> {
    let choice = |reason, action| Choice {
        lines: Lines::Reason(reason),
        action,
        amount_cents: coupon_cents,
        note: note.clone(),
    };
    let mut choices = Vec::new();
    choices.extend(oversold.map(|a| choice(LineReason::Oversold, a)));
    choices.extend(withdrawn.map(|a| choice(LineReason::Withdrawn, a)));
    if choices.is_empty() {
        return Err(DesktopError::Invalid(Said::new(
            MessageCode::ChooseCompensation,
            &[],
            "choose what the oversold or the withdrawn lines get",
        )));
    }
    Ok(set_plan(state.live().await?.records()?, case_id, &choices).await?)
}

/// Propose, approve, reject, close or note.
#[tauri::command(rename_all = "snake_case")]
pub async fn compensation_step(
    state: State<'_, AppState>,
    case_id: u64,
    step: StepKind,
    reason: String,
) -> Result<Stepped, DesktopError> {
    Ok(take(state.live().await?.records()?, case_id, step, &reason).await?)
}

/// Executes the approved plan; `confirm` is the case id typed again.
#[tauri::command(rename_all = "snake_case")]
pub async fn compensation_execute(
    app: AppHandle,
    state: State<'_, AppState>,
    case_id: u64,
    confirm: u64,
) -> Result<Execution, DesktopError> {
    if confirm != case_id {
        return Err(DesktopError::Invalid(Said::new(
            MessageCode::ConfirmCase,
            &[("case", &case_id)],
            format!("type the case id {case_id} to confirm: execution cancels orders and writes refunds"),
        )));
    }
    let progress = |done: usize, total: usize, order_no: &str| {
        let _ = app.emit(PROGRESS_EVENT, CompensationProgress { case_id, done, total, order_no: order_no.to_string() });
    };
    let live = state.live().await?;
    Ok(live.sale.execute_case(case_id, &progress).await?)
}

/// The case's lines as CSV at `path` (none: the documents folder); returns where it went.
#[tauri::command(rename_all = "snake_case")]
pub async fn compensation_export(
    state: State<'_, AppState>,
    case_id: u64,
    path: Option<String>,
) -> Result<String, DesktopError> {
    let case = show(state.live().await?.records()?, case_id).await?;
    let text = export::csv(&case).map_err(|e| DesktopError::Query(format!("the CSV: {e}").into()))?;
    let path = match path.map(|p| p.trim().to_string()).filter(|p| !p.is_empty()) {
        Some(p) => std::path::PathBuf::from(p),
        None => export::default_path(case_id, chrono::Utc::now()),
    };
    std::fs::write(&path, text).map_err(|e| {
        let shown = path.display();
        DesktopError::Invalid(Said::new(
            MessageCode::WriteFailed,
            &[("path", &shown), ("detail", &e)],
            format!("cannot write {shown}: {e}"),
        ))
    })?;
    Ok(path.display().to_string())
}
