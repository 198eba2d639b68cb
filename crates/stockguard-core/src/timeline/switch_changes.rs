//! Degrade switch changes of our own sale (`switch_changes`): who (the server's word, from
//! the change's audit row), the scope, the mode, the revision and why.

use sqlx::Row as _;

use super::event::{Event, EventKind, RecordRef};
use super::Bounds;
use crate::product_id::ProductId;
use crate::step::{Step as _, StepFailed};

/// The switch changes of the window: of the product asked for and the global ones.
pub(super) async fn read(pool: &sqlx::MySqlPool, b: &Bounds<'_>) -> Result<Vec<Event>, StepFailed> {
    let scope = b.product.as_ref().map(|p| format!("product:{p}"));
    let statement = sqlx::query(
        "SELECT c.revision, c.scope, CAST(c.mode AS CHAR) AS mode, c.changed_by, c.reason, c.changed_at, \
                a.id AS audit_id, a.actor AS audit_actor \
         FROM switch_changes c \
         LEFT JOIN audit_log a ON a.action = 'degrade.switch' AND a.target = c.scope \
              AND CAST(JSON_UNQUOTE(JSON_EXTRACT(a.details, '$.revision')) AS UNSIGNED) = c.revision \
         WHERE c.changed_at >= ? AND c.changed_at < ? AND (? IS NULL OR c.scope = ? OR c.scope = 'global') \
         ORDER BY c.changed_at DESC, c.revision DESC LIMIT ?",
    )
    .bind(b.from)
    .bind(b.to)
    .bind(&scope)
    .bind(&scope)
    .bind(b.limit);
    let rows = b.fetch(pool, statement, "reading switch_changes (timeline)").await?;
    rows.iter()
        .map(|r| {
            let scope: String = r.try_get("scope")?;
            let revision: u64 = r.try_get("revision")?;
            let product = scope.strip_prefix("product:").and_then(|p| p.parse().ok()).map(ProductId::Num);
            let audit_actor: Option<String> = r.try_get("audit_actor")?;
            Ok(Event {
                at: r.try_get("changed_at")?,
                kind: EventKind::SwitchChange,
                product_id: product,
                actor: audit_actor.unwrap_or(r.try_get("changed_by")?),
                reason: r.try_get("reason")?,
                outcome: r.try_get("mode")?,
                detail: format!("{scope}, revision {revision}"),
                record: RecordRef { table: "switch_changes", id: revision },
                audit_id: r.try_get("audit_id")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .step("decoding switch_changes (timeline)")
}
