//! The workflow's steps. Each is one row in `compensation_steps`; the database's triggers
//! check it against the case (who made the proposal, who approved it, the status) and move the
//! case on. What is checked here first is only there to answer more clearly; the triggers are
//! what hold, for raw SQL too.

use crate::step::Step as _;
use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

use super::{whoami, CaseStatus, CompensationError};

/// A workflow step a person takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StepKind {
    Propose,
    Approve,
    Reject,
    Close,
    Note,
}

impl StepKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Propose => "PROPOSE",
            Self::Approve => "APPROVE",
            Self::Reject => "REJECT",
            Self::Close => "CLOSE",
            Self::Note => "NOTE",
        }
    }
}

/// Where the case is after a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Stepped {
    pub case_id: u64,
    pub actor: String,
    pub status: CaseStatus,
    pub approvals_needed: u8,
    pub approvals: u32,
}

/// Takes a step on the case as the connected account.
pub async fn take(pool: &MySqlPool, case_id: u64, kind: StepKind, reason: &str) -> Result<Stepped, CompensationError> {
    let actor = whoami(pool).await.step("asking the server who the account is (take)")?;
    let (_, maker) = status_and_maker(pool, case_id).await?;
    if matches!(kind, StepKind::Approve | StepKind::Reject) && maker.as_deref() == Some(actor.as_str()) {
        return Err(CompensationError::Refused(format!(
            "{actor} made this proposal: another person must approve or reject it (four eyes)"
        )));
    }
    if matches!(kind, StepKind::Reject | StepKind::Close) && reason.trim().is_empty() {
        return Err(CompensationError::Refused("a reason is required".into()));
    }
    // A verdict goes to its own table (granted to approvers only), whose trigger writes the
    // step; every other step is written directly.
    let sql = match kind {
        StepKind::Approve | StepKind::Reject => {
            "INSERT INTO compensation_verdicts (case_id, verdict, reason) VALUES (?, ?, ?)"
        }
        _ => "INSERT INTO compensation_steps (case_id, step, reason) VALUES (?, ?, ?)",
    };
    sqlx::query(sql)
        .bind(case_id)
        .bind(kind.as_str())
        .bind(reason)
        .execute(pool)
        .await
        .map_err(CompensationError::from_db("recording the workflow step (take)"))?;
    stepped(pool, case_id, actor).await
}

pub(crate) async fn status_and_maker(
    pool: &MySqlPool,
    case_id: u64,
) -> Result<(CaseStatus, Option<String>), CompensationError> {
    let row: Option<(String, Option<String>)> =
        sqlx::query_as("SELECT CAST(status AS CHAR), maker FROM compensation_cases WHERE id = ?")
            .bind(case_id)
            .fetch_optional(pool)
            .await
            .step("reading compensation_cases (status and maker)")?;
    let (status, maker) = row.ok_or(CompensationError::NoSuchCase(case_id))?;
    Ok((CaseStatus::parse(&status).unwrap_or(CaseStatus::Draft), maker))
}

pub(crate) async fn stepped(pool: &MySqlPool, case_id: u64, actor: String) -> Result<Stepped, CompensationError> {
    let (status, _) = status_and_maker(pool, case_id).await?;
    let (needed, approvals): (u8, i64) = sqlx::query_as(
        "SELECT c.approvals_needed, CAST(COALESCE(JSON_LENGTH(c.approvers), 0) AS SIGNED) \
         FROM compensation_cases c WHERE c.id = ?",
    )
    .bind(case_id)
    .fetch_one(pool)
    .await
    .step("reading compensation_cases (stepped)")?;
    Ok(Stepped { case_id, actor, status, approvals_needed: needed, approvals: approvals as u32 })
}
