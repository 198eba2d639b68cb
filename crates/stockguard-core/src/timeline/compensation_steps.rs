//! Steps of compensation cases (`compensation_steps`, with their case): opened, proposed,
//! approved or rejected, executed, closed, noted; who is the server's word (the step's trigger
//! sets it), and the audit row the trigger writes of each step linked.

use sqlx::Row as _;

use super::event::{Event, EventKind, RecordRef};
use super::Bounds;
use crate::product_id::ProductId;
use crate::step::{Step as _, StepFailed};

/// The steps taken in the window on the sale's cases (by its name), of the product asked for.
pub(super) async fn read(pool: &sqlx::MySqlPool, b: &Bounds<'_>) -> Result<Vec<Event>, StepFailed> {
    let statement = sqlx::query(
        "SELECT s.id, s.case_id, CAST(s.step AS CHAR) AS step, s.actor, s.reason, s.at, \
                c.product_id, c.product_is_text, CAST(c.status AS CHAR) AS status, a.id AS audit_id \
         FROM compensation_steps s JOIN compensation_cases c ON c.id = s.case_id \
         LEFT JOIN audit_log a ON a.target = CONCAT('case:', s.case_id) \
              AND a.action = CONCAT('compensation.', LOWER(s.step)) \
              AND CAST(JSON_UNQUOTE(JSON_EXTRACT(a.details, '$.step_id')) AS UNSIGNED) = s.id \
         WHERE c.sale = ? AND s.at >= ? AND s.at < ? AND (? IS NULL OR c.product_id = ?) \
         ORDER BY s.at DESC, s.id DESC LIMIT ?",
    )
    .bind(b.sale);
    let rows = b.fetch(pool, b.bind_rest(statement), "reading compensation_steps (timeline)").await?;
    rows.iter()
        .map(|r| {
            let case: u64 = r.try_get("case_id")?;
            Ok(Event {
                at: r.try_get("at")?,
                kind: EventKind::CompensationStep,
                product_id: ProductId::from_stored(r.try_get("product_id")?, r.try_get("product_is_text")?),
                actor: r.try_get("actor")?,
                reason: r.try_get("reason")?,
                outcome: r.try_get("step")?,
                detail: format!("case {case} (now {})", r.try_get::<String, _>("status")?),
                record: RecordRef { table: "compensation_steps", id: r.try_get("id")? },
                audit_id: r.try_get("audit_id")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .step("decoding compensation_steps (timeline)")
}
