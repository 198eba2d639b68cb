//! Our fenced rewrites of Redis stock (`rewrite_runs`): the product, before and after, the
//! fence (the run's id), the outcome, and who (the server's word, from the rewrite's audit row).

use sqlx::Row as _;

use super::event::{Event, EventKind, RecordRef};
use super::Bounds;
use crate::product_id::ProductId;
use crate::step::{Step as _, StepFailed};

/// The rewrite runs started in the window, of the product asked for.
pub(super) async fn read(pool: &sqlx::MySqlPool, b: &Bounds<'_>) -> Result<Vec<Event>, StepFailed> {
    let statement = sqlx::query(
        "SELECT r.id, r.product_id, r.requested_by, r.reason, r.dry_run, r.started_at, r.before_stock, \
                r.after_stock, r.drift_after, CAST(r.outcome AS CHAR) AS outcome, r.error, \
                a.id AS audit_id, a.actor AS audit_actor \
         FROM rewrite_runs r \
         LEFT JOIN audit_log a ON a.target = CONCAT('product:', r.product_id) \
              AND a.action IN ('rewrite', 'rewrite.dry_run') \
              AND CAST(JSON_UNQUOTE(JSON_EXTRACT(a.details, '$.fence_token')) AS UNSIGNED) = r.id \
         WHERE r.started_at >= ? AND r.started_at < ? AND (? IS NULL OR r.product_id = ?) \
         ORDER BY r.started_at DESC, r.id DESC LIMIT ?",
    );
    let rows = b.fetch(pool, b.bind_rest(statement), "reading rewrite_runs (timeline)").await?;
    rows.iter()
        .map(|r| {
            let id: u64 = r.try_get("id")?;
            let product: u64 = r.try_get("product_id")?;
            let figure = |name: &str| -> Result<String, sqlx::Error> {
                Ok(r.try_get::<Option<i64>, _>(name)?.map_or_else(|| "-".to_string(), |v| v.to_string()))
            };
            let mut detail =
                format!("before {}, after {}, fence {id}", figure("before_stock")?, figure("after_stock")?);
            if r.try_get::<bool, _>("dry_run")? {
                detail.push_str(", dry run");
            }
            if let Some(error) = r.try_get::<Option<String>, _>("error")? {
                detail.push_str(&format!(": {error}"));
            }
            let audit_actor: Option<String> = r.try_get("audit_actor")?;
            Ok(Event {
                at: r.try_get("started_at")?,
                kind: EventKind::Rewrite,
                product_id: Some(ProductId::Num(product)),
                actor: audit_actor.unwrap_or(r.try_get("requested_by")?),
                reason: r.try_get("reason")?,
                outcome: r.try_get("outcome")?,
                detail,
                record: RecordRef { table: "rewrite_runs", id },
                audit_id: r.try_get("audit_id")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .step("decoding rewrite_runs (timeline)")
}
