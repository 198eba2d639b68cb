//! Drill runs of our own sale (`drill_runs`): each run's start (who, the scenario), its faults
//! injected and restored (`drill_events`) and its verdict (its status when it ended, who halted
//! it and why). A drill concerns the whole sale.

use chrono::NaiveDateTime;
use sqlx::Row as _;

use super::event::{Event, EventKind, RecordRef};
use super::Bounds;
use crate::step::{Step as _, StepFailed};

/// The runs started or ended in the window.
pub(super) async fn read(pool: &sqlx::MySqlPool, b: &Bounds<'_>) -> Result<Vec<Event>, StepFailed> {
    let statement = sqlx::query(
        "SELECT id, scenario, started_by, started_at, finished_at, CAST(status AS CHAR) AS status, halt_reason, \
                halted_by, runner \
         FROM drill_runs \
         WHERE (started_at >= ? AND started_at < ?) OR (finished_at >= ? AND finished_at < ?) \
         ORDER BY GREATEST(started_at, COALESCE(finished_at, started_at)) DESC, id DESC LIMIT ?",
    )
    .bind(b.from)
    .bind(b.to)
    .bind(b.from)
    .bind(b.to)
    .bind(b.limit);
    let rows = b.fetch(pool, statement, "reading drill_runs (timeline)").await?;
    let within = |t: NaiveDateTime| t >= b.from && t < b.to;
    let mut events = Vec::new();
    for r in &rows {
        let decode = || -> Result<_, sqlx::Error> {
            let id: u64 = r.try_get("id")?;
            let scenario: String = r.try_get("scenario")?;
            let started_by: String = r.try_get("started_by")?;
            let started_at: NaiveDateTime = r.try_get("started_at")?;
            let record = RecordRef { table: "drill_runs", id };
            let mut out = Vec::new();
            if within(started_at) {
                out.push(Event {
                    at: started_at,
                    kind: EventKind::DrillStarted,
                    product_id: None,
                    actor: started_by.clone(),
                    reason: String::new(),
                    outcome: "RUNNING".into(),
                    detail: format!("drill {scenario}"),
                    record: record.clone(),
                    audit_id: None,
                });
            }
            if let Some(finished_at) = r.try_get::<Option<NaiveDateTime>, _>("finished_at")?.filter(|t| within(*t)) {
                let halted_by: Option<String> = r.try_get("halted_by")?;
                out.push(Event {
                    at: finished_at,
                    kind: EventKind::DrillVerdict,
                    product_id: None,
                    actor: halted_by.unwrap_or(started_by),
                    reason: r.try_get::<Option<String>, _>("halt_reason")?.unwrap_or_default(),
                    outcome: r.try_get("status")?,
                    detail: format!("drill {scenario}"),
                    record,
                    audit_id: None,
                });
            }
            Ok(out)
        };
        events.extend(decode().step("decoding drill_runs (timeline)")?);
    }
    events.extend(faults(pool, b).await?);
    Ok(events)
}

/// The faults drills injected and restored in the window.
async fn faults(pool: &sqlx::MySqlPool, b: &Bounds<'_>) -> Result<Vec<Event>, StepFailed> {
    let statement = sqlx::query(
        "SELECT e.id, e.at, e.kind, e.detail, r.scenario, r.started_by \
         FROM drill_events e JOIN drill_runs r ON r.id = e.run_id \
         WHERE e.kind IN ('fault_injected', 'fault_restored') AND e.at >= ? AND e.at < ? \
         ORDER BY e.at DESC, e.id DESC LIMIT ?",
    )
    .bind(b.from)
    .bind(b.to)
    .bind(b.limit);
    let rows = b.fetch(pool, statement, "reading drill_events (timeline)").await?;
    rows.iter()
        .map(|r| {
            let detail: Option<serde_json::Value> = r.try_get("detail")?;
            let said = |key: &str| detail.as_ref().and_then(|d| d.get(key)).and_then(|v| v.as_str()).unwrap_or("");
            let kind: String = r.try_get("kind")?;
            let scenario: String = r.try_get("scenario")?;
            let (outcome, what) = if kind == "fault_injected" {
                ("INJECTED", format!("drill {scenario}: {} {}", said("target"), said("action")))
            } else {
                ("RESTORED", format!("drill {scenario}"))
            };
            Ok(Event {
                at: r.try_get("at")?,
                kind: EventKind::DrillFault,
                product_id: None,
                actor: r.try_get("started_by")?,
                reason: said("fault").to_string(),
                outcome: outcome.into(),
                detail: what,
                record: RecordRef { table: "drill_events", id: r.try_get("id")? },
                audit_id: None,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .step("decoding drill_events (timeline)")
}
