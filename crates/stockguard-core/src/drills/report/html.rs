//! The report as one self-contained HTML page: inline CSS, the charts as inline SVG, no
//! script, no font, no image from anywhere else, so it can be mailed, archived and opened
//! offline years later. Every string from the run (names, reasons, notes) is escaped.

use std::fmt::Write as _;

use super::tables::{self, Table};
use super::words::Words;
use super::{charts, ReportView};
use crate::lang::Lang;

const STYLE: &str = "\
body{font-family:-apple-system,'Segoe UI','PingFang SC','Microsoft YaHei',sans-serif;\
margin:2em auto;max-width:960px;color:#222;line-height:1.45;padding:0 1em}\
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.8em}\
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}\
th,td{border:1px solid #ddd;padding:.3em .6em;text-align:left;vertical-align:top}\
th{background:#f4f4f4}tr.bad td{background:#fdecea;color:#8a1c12}\
.status{font-weight:bold;padding:.1em .5em;border-radius:.3em}\
.status.PASSED{background:#e3f4ea;color:#1d6b3a}.status.RUNNING{background:#eef3fb}\
.status.FAILED,.status.ABORTED,.status.DEAD,.status.HALTED,.status.INCONCLUSIVE{background:#fdecea;color:#8a1c12}\
figure.chart{margin:1em 0}figure.chart figcaption{font-size:.85em;color:#555}\
.notes{white-space:pre-wrap;background:#fafafa;border-left:4px solid #F4A261;padding:.6em 1em}\
.note{color:#666;font-style:italic}";

/// Escapes text for HTML content and attribute values.
pub(super) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn table(out: &mut String, table: &Table) {
    out.push_str("<table><thead><tr>");
    for h in &table.headers {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr></thead><tbody>\n");
    for row in &table.rows {
        out.push_str(if row.bad { "<tr class=\"bad\">" } else { "<tr>" });
        for cell in &row.cells {
            let _ = write!(out, "<td>{}</td>", esc(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
}

/// A table, or a line saying there was nothing to put in it.
fn table_or_nothing(out: &mut String, t: &Table, w: &Words) {
    if t.rows.is_empty() {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(w.nothing));
    } else {
        table(out, t);
    }
}

fn h(out: &mut String, level: u8, text: &str) {
    let _ = writeln!(out, "<h{level}>{}</h{level}>", esc(text));
}

pub(super) fn render(view: &ReportView, w: &'static Words) -> String {
    let mut out = String::new();
    let lang = if view.lang == Lang::Zh { "zh-CN" } else { "en" };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"{lang}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{} · {} #{}</title><style>{STYLE}</style></head><body>\n",
        esc(&view.title),
        esc(w.report),
        view.run.record.id
    );
    let _ = writeln!(
        out,
        "<h1>{} · {}</h1><p><span class=\"status {}\">{}</span></p>",
        esc(&view.title),
        esc(w.report),
        esc(view.status),
        esc(&w.status_word(view.status))
    );
    if let Some(plan) = view.plan {
        let _ = writeln!(out, "<p>{}</p>", esc(plan.description_in(view.lang)));
    }
    if let Some(error) = view.plan_error {
        let _ = writeln!(out, "<p class=\"note\">{}: {}</p>", esc(w.plan_unreadable), esc(error));
    }
    table(&mut out, &tables::header(view, w));

    h(&mut out, 2, w.checks);
    match (tables::checks(view, w), tables::figures(view, w)) {
        (Some(checks), Some(figures)) => {
            table_or_nothing(&mut out, &checks, w);
            h(&mut out, 2, w.figures);
            table(&mut out, &figures);
        }
        _ => {
            let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(w.no_summary));
        }
    }

    h(&mut out, 2, w.charts);
    for drawn in charts::all(view, w) {
        let _ = write!(
            out,
            "<figure class=\"chart\" data-fault-windows=\"{}\"><figcaption>{}</figcaption>",
            view.fault_windows.len(),
            esc(drawn.title)
        );
        match drawn.svg {
            Ok(svg) => out.push_str(&svg),
            Err(e) => {
                let _ = write!(out, "<p class=\"note\">{}</p>", esc(&e.to_string()));
            }
        }
        out.push_str("</figure>\n");
    }
    h(&mut out, 2, w.phases);
    table_or_nothing(&mut out, &tables::phases(view, w), w);

    h(&mut out, 2, w.review);
    h(&mut out, 3, w.trigger);
    table_or_nothing(&mut out, &tables::trigger(view, w), w);
    h(&mut out, 3, w.chain);
    table_or_nothing(&mut out, &tables::moments(&view.story.chain, w), w);
    h(&mut out, 3, w.recovery);
    table_or_nothing(&mut out, &tables::moments(&view.story.recovery, w), w);
    h(&mut out, 3, w.follow_ups);
    if let (Some(by), Some(review)) = (tables::notes_by(view, w), view.review) {
        let _ = writeln!(out, "<p class=\"note\">{}</p><div class=\"notes\">{}</div>", esc(&by), esc(&review.notes));
    }
    let follow_ups = tables::follow_ups(view, w);
    if follow_ups.is_empty() {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(w.nothing));
    } else {
        out.push_str("<ul>\n");
        for (source, text) in follow_ups {
            let _ = writeln!(out, "<li>[{}] {}</li>", esc(source), esc(&text));
        }
        out.push_str("</ul>\n");
    }

    h(&mut out, 2, w.affected);
    table_or_nothing(&mut out, &tables::affected(view, w), w);
    out.push_str("</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_recorded_text_is_shown_as_text() {
        assert_eq!(
            esc(r#"<script>alert("x&y")</script>'"#),
            "&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt;&#39;"
        );
    }
}
