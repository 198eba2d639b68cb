//! Acknowledgements of alerts (`alert_acks`): the acknowledgement (who, the server's word;
//! why; until when) and its close (the alert cleared, or its time was up), each an event.
//!
//! An alert's onset is not kept anywhere yet (the desk holds it in memory while it fires), so
//! an alert nobody acknowledged leaves no event here.

use chrono::NaiveDateTime;
use sqlx::Row as _;

use super::event::{Event, EventKind, RecordRef};
use super::Bounds;
use crate::product_id::ProductId;
use crate::step::{Step as _, StepFailed};

/// The acknowledgements taken or closed in the window, of the sale (by its name) and the
/// product asked for (and those of the whole sale).
pub(super) async fn read(pool: &sqlx::MySqlPool, b: &Bounds<'_>) -> Result<Vec<Event>, StepFailed> {
    let statement = sqlx::query(
        "SELECT k.id, k.alert_key, k.kind, k.product_id, k.product_is_text, k.acked_by, k.reason, k.acked_at, \
                k.until_at, k.closed_at, k.close_reason, t.id AS ack_audit_id, c.id AS close_audit_id, \
                c.actor AS close_actor \
         FROM alert_acks k \
         LEFT JOIN audit_log t ON t.action = 'alert.ack' \
              AND t.target = IF(k.sale = '', k.alert_key, CONCAT('sale:', k.sale, ':', k.alert_key)) \
              AND CAST(JSON_UNQUOTE(JSON_EXTRACT(t.details, '$.ack_id')) AS UNSIGNED) = k.id \
         LEFT JOIN audit_log c ON c.action = 'alert.ack.closed' \
              AND c.target = IF(k.sale = '', k.alert_key, CONCAT('sale:', k.sale, ':', k.alert_key)) \
              AND CAST(JSON_UNQUOTE(JSON_EXTRACT(c.details, '$.ack_id')) AS UNSIGNED) = k.id \
         WHERE k.sale = ? AND ((k.closed_at >= ? AND k.closed_at < ?) OR (k.acked_at >= ? AND k.acked_at < ?)) \
           AND (? IS NULL OR k.product_id = ? OR k.product_id IS NULL) \
         ORDER BY GREATEST(k.acked_at, COALESCE(k.closed_at, k.acked_at)) DESC, k.id DESC LIMIT ?",
    )
    .bind(b.sale)
    .bind(b.from)
    .bind(b.to);
    let rows = b.fetch(pool, b.bind_rest(statement), "reading alert_acks (timeline)").await?;
    let within = |t: NaiveDateTime| t >= b.from && t < b.to;
    let mut events = Vec::new();
    for r in &rows {
        let decode = || -> Result<_, sqlx::Error> {
            let id: u64 = r.try_get("id")?;
            let key: String = r.try_get("alert_key")?;
            let product = match r.try_get::<Option<String>, _>("product_id")? {
                Some(text) => ProductId::from_stored(text, r.try_get("product_is_text")?),
                None => None,
            };
            let acked_at: NaiveDateTime = r.try_get("acked_at")?;
            let until: Option<NaiveDateTime> = r.try_get("until_at")?;
            let closed_at: Option<NaiveDateTime> = r.try_get("closed_at")?;
            let record = RecordRef { table: "alert_acks", id };
            let mut out = Vec::new();
            if within(acked_at) {
                out.push(Event {
                    at: acked_at,
                    kind: EventKind::AlertAcknowledged,
                    product_id: product.clone(),
                    actor: r.try_get("acked_by")?,
                    reason: r.try_get("reason")?,
                    outcome: "ACKNOWLEDGED".into(),
                    detail: match until {
                        Some(until) => format!("{key} ({}), until {until}", r.try_get::<String, _>("kind")?),
                        None => format!("{key} ({}), until it clears", r.try_get::<String, _>("kind")?),
                    },
                    record: record.clone(),
                    audit_id: r.try_get("ack_audit_id")?,
                });
            }
            if let Some(closed_at) = closed_at.filter(|t| within(*t)) {
                let why: Option<String> = r.try_get("close_reason")?;
                out.push(Event {
                    at: closed_at,
                    kind: EventKind::AlertAckClosed,
                    product_id: product,
                    actor: r.try_get::<Option<String>, _>("close_actor")?.unwrap_or_default(),
                    reason: format!("the alert {}", why.as_deref().unwrap_or("closed")),
                    outcome: why.unwrap_or_default().to_uppercase(),
                    detail: key,
                    record,
                    audit_id: r.try_get("close_audit_id")?,
                });
            }
            Ok(out)
        };
        events.extend(decode().step("decoding alert_acks (timeline)")?);
    }
    Ok(events)
}
