//! A timeline as Markdown, to attach to a ticket: a short summary (the window, how many events
//! of each kind, whether older ones were left out) and the table of events, in English or
//! Chinese. The records' own words (actors, reasons, outcomes) are shown as written.

use std::fmt::Write as _;

use super::event::{EventKind, Timeline};
use crate::lang::Lang;

/// The words of the page in one language.
struct Words {
    title: &'static str,
    sale_ours: &'static str,
    window: &'static str,
    to: &'static str,
    product: &'static str,
    all_products: &'static str,
    events: &'static str,
    truncated: &'static str,
    none: &'static str,
    columns: [&'static str; 8],
}

const EN: Words = Words {
    title: "Sale timeline",
    sale_ours: "our own sale",
    window: "Window",
    to: "to",
    product: "Product",
    all_products: "all products",
    events: "Events",
    truncated: "Older events of the window were left out to keep to the limit.",
    none: "Nothing happened in this window.",
    columns: ["Time", "Kind", "Product", "Actor", "Reason", "Outcome", "Detail", "Record"],
};

const ZH: Words = Words {
    title: "销售时间线",
    sale_ours: "本系统的销售",
    window: "时间窗口",
    to: "至",
    product: "商品",
    all_products: "全部商品",
    events: "事件",
    truncated: "为不超过上限，窗口内较早的事件未列出。",
    none: "此时间窗口内没有事件。",
    columns: ["时间", "类型", "商品", "操作人", "原因", "结果", "详情", "记录"],
};

/// A kind's name in `lang`.
pub fn kind_name(kind: EventKind, lang: Lang) -> &'static str {
    match lang {
        Lang::En => match kind {
            EventKind::SwitchChange => "switch change",
            EventKind::GuidedExit => "guided exit",
            EventKind::Rewrite => "rewrite",
            EventKind::Repair => "repair",
            EventKind::AlertAcknowledged => "alert acknowledged",
            EventKind::AlertAckClosed => "acknowledgement closed",
            EventKind::CompensationStep => "compensation step",
            EventKind::DrillStarted => "drill started",
            EventKind::DrillFault => "drill fault",
            EventKind::DrillVerdict => "drill verdict",
            EventKind::Audit => "audited action",
        },
        Lang::Zh => match kind {
            EventKind::SwitchChange => "降级开关变更",
            EventKind::GuidedExit => "引导退出",
            EventKind::Rewrite => "库存重写",
            EventKind::Repair => "增量修复",
            EventKind::AlertAcknowledged => "告警已确认",
            EventKind::AlertAckClosed => "确认已关闭",
            EventKind::CompensationStep => "补偿步骤",
            EventKind::DrillStarted => "演练开始",
            EventKind::DrillFault => "演练故障",
            EventKind::DrillVerdict => "演练结论",
            EventKind::Audit => "审计操作",
        },
    }
}

/// A cell's text: one line, its pipes escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// The timeline as a Markdown page in `lang`.
pub fn render(t: &Timeline, lang: Lang) -> String {
    let w = match lang {
        Lang::En => &EN,
        Lang::Zh => &ZH,
    };
    let mut out = String::new();
    let sale = if t.sale.is_empty() { w.sale_ours.to_string() } else { cell(&t.sale) };
    let _ = writeln!(out, "# {}: {sale}\n", w.title);
    let _ = writeln!(out, "- {}: {} {} {}", w.window, t.from, w.to, t.to);
    let product = t.product.as_ref().map_or_else(|| w.all_products.to_string(), |p| cell(&p.to_string()));
    let _ = writeln!(out, "- {}: {product}", w.product);
    let counts: Vec<String> = EventKind::ALL
        .iter()
        .filter_map(|k| {
            let n = t.events.iter().filter(|e| e.kind == *k).count();
            (n > 0).then(|| format!("{} {n}", kind_name(*k, lang)))
        })
        .collect();
    let _ = writeln!(out, "- {}: {} ({})", w.events, t.events.len(), counts.join(", "));
    if t.truncated {
        let _ = writeln!(out, "\n{}", w.truncated);
    }
    out.push('\n');
    if t.events.is_empty() {
        let _ = writeln!(out, "{}", w.none);
        return out;
    }
    let _ = writeln!(out, "| {} |", w.columns.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(w.columns.len()));
    for e in &t.events {
        let product = e.product_id.as_ref().map_or_else(String::new, ToString::to_string);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            e.at,
            kind_name(e.kind, lang),
            cell(&product),
            cell(&e.actor),
            cell(&e.reason),
            cell(&e.outcome),
            cell(&e.detail),
            e.record
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::event::{Event, RecordRef};

    fn timeline() -> Timeline {
        let at = chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap().naive_utc();
        Timeline {
            sale: String::new(),
            from: at,
            to: at,
            product: Some(5.into()),
            events: vec![Event {
                at,
                kind: EventKind::SwitchChange,
                product_id: Some(5.into()),
                actor: "oncall".into(),
                reason: "redis | slow".into(),
                outcome: "DEGRADED".into(),
                detail: "product:5, revision 1".into(),
                record: RecordRef { table: "switch_changes", id: 1 },
                audit_id: Some(9),
            }],
            truncated: false,
        }
    }

    #[test]
    fn the_page_has_a_summary_and_one_row_per_event_with_its_pipes_escaped() {
        let page = render(&timeline(), Lang::En);
        assert!(page.contains("- Events: 1 (switch change 1)"), "{page}");
        assert!(
            page.contains("| oncall | redis \\| slow | DEGRADED | product:5, revision 1 | switch_changes#1 |"),
            "{page}"
        );
    }

    #[test]
    fn the_chinese_page_names_its_kinds_and_headings_in_chinese() {
        let page = render(&timeline(), Lang::Zh);
        assert!(page.starts_with("# 销售时间线: 本系统的销售"), "{page}");
        assert!(page.contains("| 时间 | 类型 | 商品 |") && page.contains("降级开关变更"), "{page}");
    }
}
