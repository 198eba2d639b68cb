//! The facilitator's review of a run: the notes the team writes after a drill (what surprised
//! it, what it will change), kept on the run's row and shown in its report as follow-ups.
//!
//! Writing them is an operator's act, held to the same rule as a halt
//! ([`ConnectionSettings::may`] for [`Action::ReviewDrill`]) and audited with the notes themselves, so the audit
//! log keeps every version while the run keeps the latest.

use chrono::NaiveDateTime;
use serde::Serialize;
use sqlx::MySqlPool;

use super::runs::DrillRunError;
use crate::action::Action;
use crate::audit::{self, AuditEntry};
use crate::profile::ConnectionSettings;

/// The latest notes on a run, who wrote them and when (database time).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Review {
    pub notes: String,
    pub by: String,
    pub at: NaiveDateTime,
}

/// Writes (or replaces) a run's review notes; audited as `drill.review`.
pub async fn set_review(
    pool: &MySqlPool,
    settings: &ConnectionSettings,
    run_id: u64,
    notes: &str,
) -> Result<Review, DrillRunError> {
    settings.may(Action::ReviewDrill)?;
    let notes = notes.trim();
    if notes.is_empty() {
        return Err(DrillRunError::NoNotes);
    }
    let mut tx = pool.begin().await?;
    // Locked first so the run cannot be missed between the check and the write, and because
    // an UPDATE's affected-row count would not tell an unknown run from unchanged notes.
    let exists: Option<u64> = sqlx::query_scalar("SELECT id FROM drill_runs WHERE id = ? FOR UPDATE")
        .bind(run_id)
        .fetch_optional(&mut *tx)
        .await?;
    if exists.is_none() {
        return Err(DrillRunError::NoSuchRun(run_id));
    }
    sqlx::query("UPDATE drill_runs SET review_notes = ?, review_by = ?, review_at = NOW(3) WHERE id = ?")
        .bind(notes)
        .bind(&settings.actor)
        .bind(run_id)
        .execute(&mut *tx)
        .await?;
    let details = serde_json::json!({ "run": run_id, "notes": notes });
    let entry =
        AuditEntry::by(settings, "drill.review", &format!("drill_run:{run_id}"), "review notes", "recorded", details);
    audit::record(&mut *tx, &entry).await?;
    let review = review_in(&mut *tx, run_id).await?.expect("the notes were just written in this transaction");
    tx.commit().await?;
    Ok(review)
}

/// A run's review, if one was written.
pub async fn review_of(pool: &MySqlPool, run_id: u64) -> Result<Option<Review>, DrillRunError> {
    review_in(pool, run_id).await
}

async fn review_in<'e>(
    executor: impl sqlx::Executor<'e, Database = sqlx::MySql>,
    run_id: u64,
) -> Result<Option<Review>, DrillRunError> {
    let row: Option<(Option<String>, Option<String>, Option<NaiveDateTime>)> =
        sqlx::query_as("SELECT review_notes, review_by, review_at FROM drill_runs WHERE id = ?")
            .bind(run_id)
            .fetch_optional(executor)
            .await?;
    Ok(match row {
        Some((Some(notes), by, Some(at))) => Some(Review { notes, by: by.unwrap_or_default(), at }),
        _ => None,
    })
}
