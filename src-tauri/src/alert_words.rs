//! What an alert says to a person, in the window's language: the title and the sentence of
//! its desktop notification (`notify.rs`), the title of its tray menu entry (`tray.rs`).
//! A leaf: it knows the core's alerts and nothing of the files that show them.

use stockguard_core::alerts::{Alert, AlertKind};
use stockguard_core::lang::Lang;

/// The title and the sentence a person acts on.
pub fn describe(alert: &Alert, lang: Lang) -> (String, String) {
    let p = alert.product_id.as_ref().map_or_else(String::new, ToString::to_string);
    let v = alert.value.unwrap_or(0);
    match (alert.kind, lang) {
        (AlertKind::DriftConfirmed, Lang::En) => (
            format!("Drift confirmed on product {p}"),
            format!("Redis is {v:+} units off the ledger, two readings in a row. Open the product to repair it with a fenced rewrite."),
        ),
        (AlertKind::DriftConfirmed, Lang::Zh) => (
            format!("商品 {p} 漂移已确认"),
            format!("Redis 与账本相差 {v:+} 件，连续两次读数一致。打开商品，用受保护的重写修复。"),
        ),
        (AlertKind::Oversold, Lang::En) => (
            format!("Product {p} is oversold"),
            "More live orders than initial stock: open a compensation case.".into(),
        ),
        (AlertKind::Oversold, Lang::Zh) => (format!("商品 {p} 超卖"), "有效订单多于初始库存：请发起补偿。".into()),
        (AlertKind::LedgerMismatch, Lang::En) => (
            format!("Ledger mismatch on product {p}"),
            "The DB stock and the live orders disagree with the initial stock: run the ledger check.".into(),
        ),
        (AlertKind::LedgerMismatch, Lang::Zh) => {
            (format!("商品 {p} 账本不一致"), "数据库库存、有效订单与初始库存对不上：请运行账本核对。".into())
        }
        (AlertKind::KeyMissing, Lang::En) => (
            format!("Stock key missing or unreadable for product {p}"),
            "The product cannot sell until its Redis stock is rewritten.".into(),
        ),
        (AlertKind::KeyMissing, Lang::Zh) => {
            (format!("商品 {p} 库存键缺失或不可读"), "在重写 Redis 库存之前，该商品无法售卖。".into())
        }
        (AlertKind::Backlog, Lang::En) => (
            format!("Backlog: {v} reservations waiting"),
            "More reservations wait to be persisted than this profile's threshold.".into(),
        ),
        (AlertKind::Backlog, Lang::Zh) => (format!("积压：{v} 条预扣待落库"), "待落库的预扣超过了此配置的阈值。".into()),
        (AlertKind::BreakerOpen, Lang::En) => (
            format!("{v} engine breakers open"),
            "Engines sell through the DB path. Run the guided exit once Redis is back.".into(),
        ),
        (AlertKind::BreakerOpen, Lang::Zh) => {
            (format!("{v} 个引擎熔断已打开"), "引擎正走数据库路径售卖。Redis 恢复后请执行引导退出。".into())
        }
    }
}
