//! The report as Markdown, for a wiki page or a pull request: the same tables as the HTML
//! page, and instead of the charts the per-phase table (what each phase sent, accepted,
//! refused, and its worst latency, drift, backlog and DB-path count).

use std::fmt::Write as _;

use super::tables::{self, Table};
use super::words::Words;
use super::ReportView;

/// A table cell: a pipe would end it and a newline the table; `<` before a letter, `/` or
/// `!` would open markup (a bound such as `<= 15 s` is left as it reads).
fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '|' => out.push_str("\\|"),
            '\r' | '\n' => out.push(' '),
            '<' if chars.peek().is_some_and(|n| n.is_alphabetic() || matches!(n, '/' | '!')) => out.push_str("&lt;"),
            c => out.push(c),
        }
    }
    out
}

fn table(out: &mut String, table: &Table, w: &Words) {
    if table.rows.is_empty() {
        let _ = writeln!(out, "_{}_\n", w.nothing);
        return;
    }
    let headers: Vec<String> = table.headers.iter().map(|h| cell(h)).collect();
    let _ = writeln!(out, "| {} |", headers.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(headers.len()));
    for row in &table.rows {
        let cells: Vec<String> =
            row.cells.iter().map(|c| if row.bad { format!("**{}**", cell(c)) } else { cell(c) }).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out.push('\n');
}

pub(super) fn render(view: &ReportView, w: &'static Words) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {} · {}\n", cell(&view.title), w.report);
    if let Some(plan) = view.plan {
        let _ = writeln!(out, "{}\n", cell(plan.description_in(view.lang)));
    }
    if let Some(error) = view.plan_error {
        let _ = writeln!(out, "_{}: {}_\n", w.plan_unreadable, cell(error));
    }
    table(&mut out, &tables::header(view, w), w);

    let _ = writeln!(out, "## {}\n", w.checks);
    match (tables::checks(view, w), tables::figures(view, w)) {
        (Some(checks), Some(figures)) => {
            table(&mut out, &checks, w);
            let _ = writeln!(out, "## {}\n", w.figures);
            table(&mut out, &figures, w);
        }
        _ => {
            let _ = writeln!(out, "_{}_\n", w.no_summary);
        }
    }
    let _ = writeln!(out, "## {}\n", w.phases);
    table(&mut out, &tables::phases(view, w), w);

    let _ = writeln!(out, "## {}\n", w.review);
    let _ = writeln!(out, "### {}\n", w.trigger);
    table(&mut out, &tables::trigger(view, w), w);
    let _ = writeln!(out, "### {}\n", w.chain);
    table(&mut out, &tables::moments(&view.story.chain, w), w);
    let _ = writeln!(out, "### {}\n", w.recovery);
    table(&mut out, &tables::moments(&view.story.recovery, w), w);
    let _ = writeln!(out, "### {}\n", w.follow_ups);
    if let Some(by) = tables::notes_by(view, w) {
        let _ = writeln!(out, "_{}_\n", cell(&by));
    }
    let follow_ups = tables::follow_ups(view, w);
    if follow_ups.is_empty() {
        let _ = writeln!(out, "_{}_", w.nothing);
    }
    for (source, text) in follow_ups {
        let _ = writeln!(out, "- [{source}] {}", cell(&text));
    }
    out.push('\n');

    let _ = writeln!(out, "## {}\n", w.affected);
    table(&mut out, &tables::affected(view, w), w);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_keeps_its_row_and_opens_no_markup() {
        assert_eq!(cell("a|b\nc <b>x</b> <= 15"), "a\\|b c &lt;b>x&lt;/b> <= 15");
    }
}
