//! Drill runs as the database keeps them: the contract between a drill runner (a process of
//! the `stockguard` binary, in `stockguard-engine`) and whoever watches or stops it (the
//! CLI, the desktop console), which never talk to each other directly.
//!
//! The runner [`begin`]s a run, beats its heart every second ([`heartbeat`]), which also tells
//! it whether a halt was requested, and [`finish`]es it. Anyone allowed to operate the sale
//! may [`request_halt`] every running drill (audited); [`list`] shows each run, and a running
//! one whose heartbeat is older than `stale_after` as dead: its runner stopped without
//! finishing (the fault proxies end its faults when their leases run out).
//!
//! Time is the database's (`NOW(3)`) throughout, so the clocks of the runner's and the
//! watcher's machines do not matter.

use chrono::NaiveDateTime;
use serde::Serialize;
use sqlx::MySqlPool;

use crate::action::Action;
use crate::audit::{self, AuditEntry};
use crate::profile::ConnectionSettings;

/// How old a running drill's heartbeat (beaten every second) may be before the run is shown
/// as dead: its runner stopped without finishing.
pub const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum RunStatus {
    Running,
    Passed,
    Failed,
    /// Ran to its end and broke nothing, but proved nothing either: a fault of its file did
    /// not take effect (or it had none), or the rig's engines were not back at the end.
    Inconclusive,
    /// Stopped by one of its abort conditions (oversell above all).
    Aborted,
    /// Stopped by a halt request.
    Halted,
    /// Its runner stopped without finishing (killed, its machine gone): its heartbeat grew
    /// older than [`STALE_AFTER`], and the next command that looked ended it
    /// ([`super::leftovers::sweep`]).
    Dead,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "RUNNING",
            Self::Passed => "PASSED",
            Self::Failed => "FAILED",
            Self::Inconclusive => "INCONCLUSIVE",
            Self::Aborted => "ABORTED",
            Self::Halted => "HALTED",
            Self::Dead => "DEAD",
        }
    }

    fn parse(s: &str) -> Result<Self, DrillRunError> {
        [Self::Running, Self::Passed, Self::Failed, Self::Inconclusive, Self::Aborted, Self::Halted, Self::Dead]
            .into_iter()
            .find(|status| status.as_str() == s)
            .ok_or_else(|| DrillRunError::UnknownStatus(s.to_string()))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DrillRunError {
    #[error(transparent)]
    Refused(#[from] crate::action::Refused),
    #[error("a reason is required (it goes to the audit log)")]
    NoReason,
    #[error("the review notes are empty: write what the team takes away from the run")]
    NoNotes,
    #[error("drill run {0} does not exist")]
    NoSuchRun(u64),
    #[error("drill run {0} has already finished")]
    AlreadyFinished(u64),
    #[error(
        "drill run {id} ({scenario}, started by {started_by}) is running on this sale: one drill at a time (halt it, or wait for it to end)"
    )]
    AnotherRunning { id: u64, scenario: String, started_by: String },
    #[error("another drill is starting on this sale right now; try again in a moment")]
    BeginBusy,
    #[error("a drill run holds an unknown status: {0}")]
    UnknownStatus(String),
    #[error("the rig row of ended drill run {run} could not be led back to NORMAL: {source}")]
    RigRow {
        run: u64,
        #[source]
        source: Box<crate::switch::SwitchError>,
    },
    #[error("the Redis keys of dead drill run {run}'s products could not be removed: {source}")]
    RigKeys {
        run: u64,
        #[source]
        source: redis::RedisError,
    },
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// A run as [`list`] shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RunRecord {
    pub id: u64,
    pub scenario: String,
    pub started_by: String,
    pub runner: Option<String>,
    pub started_at: NaiveDateTime,
    pub finished_at: Option<NaiveDateTime>,
    pub status: RunStatus,
    /// Its runner stopped without finishing: a running run whose heartbeat is stale, or a run
    /// already ended `DEAD`.
    pub dead: bool,
    /// Seconds since the last heartbeat, by the database's clock.
    pub heartbeat_age_s: Option<f64>,
    pub halt_requested_at: Option<NaiveDateTime>,
    pub halt_reason: Option<String>,
    pub plan_hash: Option<String>,
    pub seed: Option<u64>,
}

/// What a runner says of the run it starts.
#[derive(Debug, Clone)]
pub struct NewRun<'a> {
    pub scenario: &'a str,
    /// Where it runs, e.g. `host:pid`.
    pub runner: &'a str,
    pub plan_hash: &'a str,
    pub seed: u64,
    pub parameters: serde_json::Value,
}

/// Records a run as RUNNING, its first heartbeat now; returns its id. Refused while another
/// run of this sale is alive (RUNNING with a heartbeat younger than [`STALE_AFTER`]): two drills
/// on one sale spoil each other's figures. Two runners starting at once are serialised on a
/// named lock of this database, so one of them is refused. Who started it is the server's word
/// (the account connected), not the client's.
pub async fn begin(pool: &MySqlPool, run: &NewRun<'_>) -> Result<u64, DrillRunError> {
    let mut conn = pool.acquire().await?;
    let lock: Option<i64> = sqlx::query_scalar("SELECT GET_LOCK(CONCAT('stockguard-drill-begin:', DATABASE()), 10)")
        .fetch_one(&mut *conn)
        .await?;
    if lock != Some(1) {
        return Err(DrillRunError::BeginBusy);
    }
    let begun = begin_alone(&mut conn, run).await;
    let _ = sqlx::query("SELECT RELEASE_LOCK(CONCAT('stockguard-drill-begin:', DATABASE()))").execute(&mut *conn).await;
    begun
}

async fn begin_alone(conn: &mut sqlx::MySqlConnection, run: &NewRun<'_>) -> Result<u64, DrillRunError> {
    let alive: Option<(u64, String, String)> = sqlx::query_as(
        "SELECT id, scenario, started_by FROM drill_runs WHERE status = 'RUNNING' \
         AND heartbeat_at > NOW(3) - INTERVAL ? MICROSECOND ORDER BY id LIMIT 1",
    )
    .bind(STALE_AFTER.as_micros() as u64)
    .fetch_optional(&mut *conn)
    .await?;
    if let Some((id, scenario, started_by)) = alive {
        return Err(DrillRunError::AnotherRunning { id, scenario, started_by });
    }
    let done = sqlx::query(
        "INSERT INTO drill_runs (scenario, started_by, runner, plan_hash, seed, parameters, heartbeat_at) \
         VALUES (?, SUBSTRING_INDEX(USER(), '@', 1), ?, ?, ?, ?, NOW(3))",
    )
    .bind(run.scenario)
    .bind(run.runner)
    .bind(run.plan_hash)
    .bind(run.seed)
    .bind(&run.parameters)
    .execute(&mut *conn)
    .await?;
    Ok(done.last_insert_id())
}

/// The runner is alive. Answers the reason of a halt requested since the run began, if any,
/// which the runner must obey (stop the load, restore every fault, [`finish`] as HALTED).
pub async fn heartbeat(pool: &MySqlPool, run_id: u64) -> Result<Option<String>, DrillRunError> {
    let beat = sqlx::query("UPDATE drill_runs SET heartbeat_at = NOW(3) WHERE id = ? AND status = 'RUNNING'")
        .bind(run_id)
        .execute(pool)
        .await?;
    let row: Option<(String, Option<NaiveDateTime>, Option<String>)> =
        sqlx::query_as("SELECT CAST(status AS CHAR), halt_requested_at, halt_reason FROM drill_runs WHERE id = ?")
            .bind(run_id)
            .fetch_optional(pool)
            .await?;
    let Some((status, halt_at, reason)) = row else {
        return Err(DrillRunError::NoSuchRun(run_id));
    };
    if beat.rows_affected() == 0 && RunStatus::parse(&status)? != RunStatus::Running {
        return Err(DrillRunError::AlreadyFinished(run_id));
    }
    Ok(halt_at.map(|_| reason.unwrap_or_default()))
}

/// Ends a run with its verdict and summary. A run already ended keeps its first verdict.
pub async fn finish(
    pool: &MySqlPool,
    run_id: u64,
    status: RunStatus,
    summary: &serde_json::Value,
) -> Result<(), DrillRunError> {
    // A run marked ABORTED the moment it was decided ([`mark_aborted`]) gets its full summary
    // once the drain and the checks are done; its status and time stay the abort's.
    let done = sqlx::query(
        "UPDATE drill_runs SET finished_at = IF(status = 'RUNNING', NOW(3), finished_at), status = ?, summary = ? \
         WHERE id = ? AND (status = 'RUNNING' OR (status = 'ABORTED' AND ? = 'ABORTED'))",
    )
    .bind(status.as_str())
    .bind(summary)
    .bind(run_id)
    .bind(status.as_str())
    .execute(pool)
    .await?;
    if done.rows_affected() == 0 {
        let exists: Option<u64> =
            sqlx::query_scalar("SELECT id FROM drill_runs WHERE id = ?").bind(run_id).fetch_optional(pool).await?;
        return Err(exists.map_or(DrillRunError::NoSuchRun(run_id), DrillRunError::AlreadyFinished));
    }
    Ok(())
}

/// The runner decided to abort (an oversold unit, a declared abort bound): the run is
/// `ABORTED` in the database at once, before the load is drained and the orders checked, so
/// `drill status` and the window never say RUNNING about a run that has stopped. [`finish`]
/// adds the summary later.
pub async fn mark_aborted(pool: &MySqlPool, run_id: u64, reason: &str) -> Result<(), DrillRunError> {
    sqlx::query(
        "UPDATE drill_runs SET status = 'ABORTED', finished_at = NOW(3), summary = JSON_OBJECT('reason', ?) \
         WHERE id = ? AND status = 'RUNNING'",
    )
    .bind(reason)
    .bind(run_id)
    .execute(pool)
    .await?;
    Ok(())
}

/// Asks every running drill of this sale to halt; audited. Returns the runs asked (none is
/// no error: there was nothing to halt, and the audit says so).
pub async fn request_halt(
    pool: &MySqlPool,
    settings: &ConnectionSettings,
    reason: &str,
) -> Result<Vec<u64>, DrillRunError> {
    settings.may(Action::HaltDrill)?;
    if reason.trim().is_empty() {
        return Err(DrillRunError::NoReason);
    }
    let mut tx = pool.begin().await?;
    let running: Vec<u64> = sqlx::query_scalar(
        "SELECT id FROM drill_runs WHERE status = 'RUNNING' AND halt_requested_at IS NULL FOR UPDATE",
    )
    .fetch_all(&mut *tx)
    .await?;
    for id in &running {
        // Who halted it is the server's word, as for who started it.
        sqlx::query(
            "UPDATE drill_runs SET halt_requested_at = NOW(3), halt_reason = ?, halted_by = SUBSTRING_INDEX(USER(), '@', 1) \
             WHERE id = ?",
        )
        .bind(reason)
        .bind(id)
            .execute(&mut *tx)
            .await?;
    }
    let outcome = if running.is_empty() { "nothing running" } else { "requested" };
    let entry =
        AuditEntry::by(settings, "drill.halt", "drills", reason, outcome, serde_json::json!({ "runs": running }));
    audit::record(&mut *tx, &entry).await?;
    tx.commit().await?;
    Ok(running)
}

/// The newest `limit` runs, newest first; a running one with a heartbeat older than
/// `stale_after` is dead.
pub async fn list(
    pool: &MySqlPool,
    limit: u32,
    stale_after: std::time::Duration,
) -> Result<Vec<RunRecord>, DrillRunError> {
    list_where(pool, "", None, limit, stale_after).await
}

async fn list_where(
    pool: &MySqlPool,
    filter: &str,
    id: Option<u64>,
    limit: u32,
    stale_after: std::time::Duration,
) -> Result<Vec<RunRecord>, DrillRunError> {
    #[derive(sqlx::FromRow)]
    struct Row {
        id: u64,
        scenario: String,
        started_by: String,
        runner: Option<String>,
        started_at: NaiveDateTime,
        finished_at: Option<NaiveDateTime>,
        status: String,
        heartbeat_age_us: Option<i64>,
        halt_requested_at: Option<NaiveDateTime>,
        halt_reason: Option<String>,
        plan_hash: Option<String>,
        seed: Option<u64>,
    }
    let sql = format!(
        "SELECT id, scenario, started_by, runner, started_at, finished_at, CAST(status AS CHAR) AS status, \
                TIMESTAMPDIFF(MICROSECOND, heartbeat_at, NOW(3)) AS heartbeat_age_us, halt_requested_at, \
                halt_reason, plan_hash, seed \
         FROM drill_runs {filter} ORDER BY id DESC LIMIT ?"
    );
    let mut query = sqlx::query_as(&sql);
    if let Some(id) = id {
        query = query.bind(id);
    }
    let rows: Vec<Row> = query.bind(limit).fetch_all(pool).await?;
    rows.into_iter()
        .map(|row| {
            let status = RunStatus::parse(&row.status)?;
            let heartbeat_age_s = row.heartbeat_age_us.map(|us| us as f64 / 1e6);
            let stale =
                status == RunStatus::Running && heartbeat_age_s.is_none_or(|age| age > stale_after.as_secs_f64());
            let dead = stale || status == RunStatus::Dead;
            Ok(RunRecord {
                id: row.id,
                scenario: row.scenario,
                started_by: row.started_by,
                runner: row.runner,
                started_at: row.started_at,
                finished_at: row.finished_at,
                status,
                dead,
                heartbeat_age_s,
                halt_requested_at: row.halt_requested_at,
                halt_reason: row.halt_reason,
                plan_hash: row.plan_hash,
                seed: row.seed,
            })
        })
        .collect()
}

/// A run with what it was asked to do and what it came to.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RunDetail {
    #[serde(flatten)]
    pub record: RunRecord,
    /// The runner's parameters: the drill file's text, the variant, the rig's products.
    pub parameters: serde_json::Value,
    /// Absent while the run is going, or when its runner died.
    pub summary: Option<super::summary::Summary>,
}

/// One run, by id.
pub async fn show(pool: &MySqlPool, run_id: u64, stale_after: std::time::Duration) -> Result<RunDetail, DrillRunError> {
    let record = list_where(pool, "WHERE id = ?", Some(run_id), 1, stale_after)
        .await?
        .pop()
        .ok_or(DrillRunError::NoSuchRun(run_id))?;
    let (parameters, summary): (Option<serde_json::Value>, Option<serde_json::Value>) =
        sqlx::query_as("SELECT parameters, summary FROM drill_runs WHERE id = ?").bind(run_id).fetch_one(pool).await?;
    Ok(RunDetail {
        record,
        parameters: parameters.unwrap_or_default(),
        summary: summary.and_then(|s| serde_json::from_value(s).ok()),
    })
}
