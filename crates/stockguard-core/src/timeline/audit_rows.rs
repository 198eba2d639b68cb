//! The audit log's rows that no other source of the timeline reads from a table of its own:
//! guided exits, an adapter sale's switch flag and delta repairs, compensation plans, and every
//! other write action (roles applied, drills halted or reviewed, baselines recorded).
//!
//! The audit rows of a switch change, a rewrite, an acknowledgement and a compensation step
//! are linked from those records' own events, not listed twice. A row is of the sale its
//! target names (`sale:NAME:...` for a sale read over its adapter, anything else for our own),
//! or, for a case's row, of the sale of its case.

use serde_json::Value;
use sqlx::Row as _;

use super::event::{Event, EventKind, RecordRef};
use super::Bounds;
use crate::product_id::ProductId;
use crate::step::{Step as _, StepFailed};

/// The actions whose records the other sources read (and link their audit row from).
const READ_ELSEWHERE: &str = "a.action NOT IN ('degrade.switch', 'rewrite', 'rewrite.dry_run', 'rewrite.begin', \
                              'alert.ack', 'alert.ack.closed') \
                              AND (a.action NOT LIKE 'compensation.%' OR a.action = 'compensation.plan')";

/// The audit rows of the window of this sale and the product asked for (and of the whole sale).
pub(super) async fn read(pool: &sqlx::MySqlPool, b: &Bounds<'_>) -> Result<Vec<Event>, StepFailed> {
    let ours = b.sale.is_empty();
    let of_sale = if ours { "a.target NOT LIKE 'sale:%'" } else { "(a.target = ? OR a.target LIKE ?)" };
    let sql = format!(
        "SELECT a.id, a.at, a.actor, a.action, a.target, a.reason, a.outcome, a.details, \
                c.product_id AS case_product, c.product_is_text AS case_is_text \
         FROM audit_log a \
         LEFT JOIN compensation_cases c ON a.target LIKE 'case:%' AND c.id = CAST(SUBSTRING(a.target, 6) AS UNSIGNED) \
         WHERE a.at >= ? AND a.at < ? AND {READ_ELSEWHERE} \
           AND (CASE WHEN c.id IS NOT NULL THEN c.sale = ? ELSE {of_sale} END) \
           AND (? IS NULL OR (c.id IS NOT NULL AND c.product_id = ?) \
                OR (c.id IS NULL AND (a.target = ? OR a.target NOT LIKE '%product:%'))) \
         ORDER BY a.at DESC, a.id DESC LIMIT ?"
    );
    let prefix = if ours { String::new() } else { format!("sale:{}:", b.sale) };
    let mut query = sqlx::query(&sql).bind(b.from).bind(b.to).bind(b.sale);
    if !ours {
        query = query.bind(format!("sale:{}", b.sale)).bind(format!("{}%", like_escaped(&prefix)));
    }
    let product_target = b.product.as_ref().map(|p| format!("{prefix}product:{p}"));
    let statement = query.bind(&b.product).bind(&b.product).bind(&product_target).bind(b.limit);
    let rows = b.fetch(pool, statement, "reading audit_log (timeline)").await?;
    rows.iter()
        .map(|r| {
            let action: String = r.try_get("action")?;
            let target: String = r.try_get("target")?;
            let details: Option<Value> = r.try_get("details")?;
            let details = details.unwrap_or(Value::Null);
            let product = match r.try_get::<Option<String>, _>("case_product")? {
                Some(text) => {
                    ProductId::from_stored(text, r.try_get::<Option<bool>, _>("case_is_text")?.unwrap_or(false))
                }
                None => product_of(&target, &prefix),
            };
            let (kind, detail) = described(&action, &target, &details);
            Ok(Event {
                at: r.try_get("at")?,
                kind,
                product_id: product,
                actor: r.try_get("actor")?,
                reason: r.try_get("reason")?,
                outcome: r.try_get("outcome")?,
                detail,
                record: RecordRef { table: "audit_log", id: r.try_get("id")? },
                audit_id: Some(r.try_get("id")?),
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .step("decoding audit_log (timeline)")
}

/// The product an audit row's target names (`product:17`, `sale:NAME:product:SKU-A`): a number
/// when it reads as one.
fn product_of(target: &str, prefix: &str) -> Option<ProductId> {
    let id = target.strip_prefix(prefix)?.strip_prefix("product:")?;
    Some(id.parse().map_or_else(|_| ProductId::Text(id.to_string()), ProductId::Num))
}

/// The kind of an audited action and its figures in a few words.
fn described(action: &str, target: &str, details: &Value) -> (EventKind, String) {
    let figure = |key: &str| match details.get(key) {
        None | Some(Value::Null) => "-".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    };
    match action {
        "degrade.exit" => (
            EventKind::GuidedExit,
            format!(
                "{target}, paused {} ms, revisions {} to {}",
                figure("paused_ms"),
                figure("pause_revision"),
                figure("normal_revision")
            ),
        ),
        "adapter_switch" => {
            (EventKind::SwitchChange, format!("the sale's flag {} to {}", figure("before"), figure("after")))
        }
        "adapter_rewrite" => (
            EventKind::Repair,
            format!(
                "before {}, after {}, delta {}",
                figure("redis_before"),
                figure("redis_after"),
                figure("increment")
            ),
        ),
        "compensation.plan" => (
            EventKind::CompensationStep,
            format!(
                "{}, {} lines planned, total {} cents",
                target.replace(':', " "),
                figure("lines_changed"),
                figure("total_cents")
            ),
        ),
        _ => (EventKind::Audit, format!("{action} on {target}")),
    }
}

/// `text` matched literally by `LIKE`.
fn like_escaped(text: &str) -> String {
    text.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_names_its_product_as_itself() {
        assert_eq!(product_of("product:17", ""), Some(ProductId::Num(17)));
        assert_eq!(product_of("sale:shop:product:SKU-A", "sale:shop:"), Some(ProductId::Text("SKU-A".into())));
        assert_eq!(product_of("global", ""), None);
        assert_eq!(product_of("sale:other:product:1", "sale:shop:"), None);
    }

    #[test]
    fn a_guided_exit_says_its_pause_and_revisions() {
        let details = serde_json::json!({ "paused_ms": 412, "pause_revision": 7, "normal_revision": 8 });
        let (kind, detail) = described("degrade.exit", "product:5", &details);
        assert_eq!(kind, EventKind::GuidedExit);
        assert_eq!(detail, "product:5, paused 412 ms, revisions 7 to 8");
        assert_eq!(described("roles.apply", "sg", &Value::Null), (EventKind::Audit, "roles.apply on sg".into()));
    }
}
