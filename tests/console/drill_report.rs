//! A drill run written up: the report shows the checks, the figures, a chart per series with
//! the fault window shaded, the review read off the timeline and the orders to compensate, in
//! Chinese or English; two runs compared flag what got worse; the facilitator's notes are
//! written by an operator only, audited, and shown as follow-ups.

use sqlx::MySqlPool;
use stockguard_core::action::Refused;
use stockguard_core::drills::report::{self, Format, FAULT_FILL};
use stockguard_core::drills::{self, compare, DrillRunError, RunStatus};
use stockguard_core::lang::Lang;
use stockguard_core::profile::{ConnectionSettings, EnvironmentKind, Role};

use crate::support;
use crate::support::drill_run::{begin, failed_redis_down_run, finished_run, record_timeline, summary, FAULT};

fn settings(role: Role) -> ConnectionSettings {
    let mut settings =
        ConnectionSettings::from_urls(EnvironmentKind::Sandbox, "mysql://unused/x", "redis://unused/", "sg");
    settings.role = role;
    settings
}

#[sqlx::test(migrations = "./migrations")]
async fn the_html_report_draws_every_chart_with_the_fault_window_and_shows_the_failed_check(pool: MySqlPool) {
    let run = failed_redis_down_run(&pool).await;
    let data = report::load(&pool, run).await.unwrap();
    let html = report::render(&data, Format::Html, Lang::En);

    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert!(!html.contains("<script") && !html.contains("<link") && !html.contains("src=\"http"), "self-contained");
    assert_eq!(html.matches("<svg").count(), 5, "throughput, latency, drift, backlog, mode");
    let shaded = html.matches(&format!("fill=\"{FAULT_FILL}\"")).count();
    assert!(shaded >= 5, "each chart shades the fault window (and keys it in its legend): {shaded}");
    assert_eq!(html.matches("data-fault-windows=\"1\"").count(), 5);

    assert!(html.contains("Redis down mid-sale") && html.contains(&format!("#{run} redis-down")));
    assert!(html.contains("FAILED") && html.contains("<td>Started by</td><td>root</td>") && html.contains("20261201"));
    assert!(html.contains("<tr class=\"bad\"><td>recovery_s</td><td>SLO</td><td>FAIL</td><td>18.2 s</td>"), "{html}");
    assert!(
        html.contains("<td>Recovery (s)</td><td>18.2</td>") && html.contains("<td>Latency p99 (ms)</td><td>180.0</td>")
    );
    assert!(html.contains("DRL20261201000042"), "the order to compensate");

    assert!(html.contains("Chain of impact") && html.contains("first engine on the DB path"));
    assert!(html.contains("<td>4.6</td><td>first engine on the DB path</td><td>db_path=2 redis_path=1</td>"));
    assert!(html.contains("<td>peak drift</td><td>drift_max_abs=40 drift=40</td>"), "the last second of the cut");
    assert!(html.contains("guided exit: back on Redis &lt;3 engines&gt;"), "recorded text is escaped");
    assert!(html.contains("<td>13.5</td><td>every engine back on Redis</td>"));
    assert!(html.contains("[failed check] recovery_s: measured 18.2 s against &lt;= 15 s."), "a follow-up per failure");
    assert!(!html.contains("影响链"), "no Chinese label in the English report");
}

/// The English words of a text that are not identifiers: a run of ASCII letters with a
/// lower-case letter in it, that is not snake_case, a `key=value`, a hyphenated id or a code.
fn english_words(text: &str) -> Vec<String> {
    let token = |c: char| c.is_ascii_alphanumeric() || "_=-.:#/<>".contains(c);
    // What stays as written in either language: names the servers and the file give.
    const IDENTIFIERS: &[&str] = &["Redis", "redis", "down", "root", "host:4242", "ms", "SLO"];
    text.split(|c: char| !token(c))
        .filter(|w| w.chars().filter(|c| c.is_ascii_alphabetic()).count() >= 2)
        .filter(|w| w.chars().any(|c| c.is_ascii_lowercase()))
        .filter(|w| !w.contains(['_', '=', '-', '/', ':', '#', '<', '>']))
        .filter(|w| !IDENTIFIERS.contains(w))
        // Hashes (the drill file's, the schedule's).
        .filter(|w| !w.chars().all(|c| c.is_ascii_hexdigit()))
        .map(str::to_string)
        .collect()
}

#[sqlx::test(migrations = "./migrations")]
async fn the_chinese_report_leaves_no_english_but_identifiers_and_names_the_fault_in_chinese(pool: MySqlPool) {
    let run = failed_redis_down_run(&pool).await;
    let data = report::load(&pool, run).await.unwrap();
    let md = report::render(&data, Format::Markdown, Lang::Zh);
    // Recorded text (a repair's outcome the runner wrote in the fixture) is shown as written.
    let md = md.replace("guided exit: back on Redis <3 engines>", "");
    let english = english_words(&md);
    assert!(english.is_empty(), "English left in the Chinese report: {english:?}\n{md}");
    assert!(md.contains("Redis 拒绝并切断连接"), "the fault by its name_zh");
    assert!(md.contains("压测") && md.contains("排空") && md.contains("核验"), "the phases in Chinese");
    assert!(md.contains("18.2 s") && md.contains("<= 15 s"), "figures keep their numbers and units");
}

#[sqlx::test(migrations = "./migrations")]
async fn the_chinese_report_labels_everything_in_chinese(pool: MySqlPool) {
    let run = failed_redis_down_run(&pool).await;
    let data = report::load(&pool, run).await.unwrap();
    let html = report::render(&data, Format::Html, Lang::Zh);

    assert!(html.contains("<html lang=\"zh-CN\">") && html.contains("秒杀中途 Redis 宕机 · 演练报告"));
    for label in
        ["未通过 (FAILED)", "检查项", "关键指标", "恢复用时（秒）", "影响链", "后续改进", "需要补偿的订单", "故障窗口"]
    {
        assert!(html.contains(label), "{label} missing");
    }
    assert!(html.contains("首个引擎切到数据库路径") && html.contains("压测开始后的秒数"), "chart axes too");
    for english in ["Chain of impact", "Follow-ups", "Orders that need compensation", "fault window"] {
        assert!(!html.contains(english), "{english} left in English");
    }
    assert_eq!(html.matches("<svg").count(), 5);
}

#[sqlx::test(migrations = "./migrations")]
async fn the_markdown_report_holds_the_checks_and_a_table_per_phase_and_the_json_parses_back(pool: MySqlPool) {
    let run = failed_redis_down_run(&pool).await;
    let data = report::load(&pool, run).await.unwrap();

    let md = report::render(&data, Format::Markdown, Lang::En);
    assert!(md.starts_with("# Redis down mid-sale · Drill report"));
    assert!(md.contains("| Check | Kind | Verdict | Figure | Bound |"));
    assert!(md.contains("| **recovery_s** | **SLO** | **FAIL** | **18.2 s** | **<= 15 s** |"), "{md}");
    assert!(md.contains("| no_oversell | invariant | PASS | 0 units | 0 units |"));
    assert!(md.contains("| Phase | From (s) | To (s) | Sent | Accepted |"), "{md}");
    assert!(md.contains("| load | 0.0 | 16.5 | 32000 | 6000 | 25680 | 320 | 180.0 | 40 | 480 | 3 |"), "{md}");
    assert!(!md.contains("<svg"), "no charts in Markdown");

    let json: serde_json::Value = serde_json::from_str(&report::render(&data, Format::Json, Lang::En)).unwrap();
    assert_eq!(json["status"], "FAILED");
    assert_eq!(json["run"]["id"], run);
    assert_eq!(json["run"]["summary"]["affected_orders"][0]["order_no"], "DRL20261201000042");
    assert_eq!(json["fault_windows"][0]["fault"], FAULT);
    assert_eq!(
        (json["fault_windows"][0]["start_s"].as_f64(), json["fault_windows"][0]["end_s"].as_f64()),
        (Some(4.0), Some(12.0))
    );
    assert_eq!(json["series"]["load"].as_array().unwrap().len(), 16);
    let chain: Vec<&str> =
        json["story"]["chain"].as_array().unwrap().iter().map(|m| m["kind"].as_str().unwrap()).collect();
    assert_eq!(chain, ["worst_error_second", "first_db_path", "all_on_db_path", "peak_drift", "peak_backlog"]);
    assert_eq!(json["story"]["follow_ups"][0]["source"], "failed_check");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_run_whose_runner_died_is_reported_from_its_timeline_alone(pool: MySqlPool) {
    let run = begin(&pool).await;
    record_timeline(&pool, run).await;
    sqlx::query("UPDATE drill_runs SET heartbeat_at = NOW(3) - INTERVAL 1 MINUTE WHERE id = ?")
        .bind(run)
        .execute(&pool)
        .await
        .unwrap();
    let data = report::load(&pool, run).await.unwrap();
    let html = report::render(&data, Format::Html, Lang::En);
    assert!(html.contains("DEAD (its runner stopped without finishing)"));
    assert!(html.contains("This run has no summary"));
    assert_eq!(html.matches("<svg").count(), 5, "the timeline still draws");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_comparison_flags_what_got_worse_beyond_the_threshold_and_any_oversell(pool: MySqlPool) {
    let a = finished_run(&pool, RunStatus::Passed, &summary(100.0, 10.0, 0)).await;
    let b = finished_run(&pool, RunStatus::Failed, &summary(150.0, 20.0, 1)).await;
    let show = |id| drills::show(&pool, id, drills::STALE_AFTER);
    let (a, b) = (show(a).await.unwrap(), show(b).await.unwrap());

    let comparison = compare::compare(&a, &b, 0.2);
    assert_eq!(comparison.regressions, vec!["oversold_units", "p99_ms", "recovery_s"]);
    let row = |name| comparison.rows.iter().find(|r| r.figure == name).unwrap();
    assert_eq!((row("p99_ms").a, row("p99_ms").b, row("p99_ms").change), (Some(100.0), Some(150.0), Some(0.5)));
    assert!(!row("drift_peak").regressed && !row("lost").regressed, "equal figures are no regression");
    assert_eq!(row("oversold_units").diff, Some(1.0));
    assert!(comparison.same_plan && comparison.same_schedule);
    assert!(comparison.table().contains("3 regression(s): oversold_units, p99_ms, recovery_s"));

    let lenient = compare::compare(&a, &b, 1.5);
    assert_eq!(lenient.regressions, vec!["oversold_units"], "an oversell regresses whatever the threshold");
    let same = compare::compare(&a, &a, 0.2);
    assert!(same.regressions.is_empty() && same.rows.iter().all(|r| !r.regressed));
}

#[sqlx::test(migrations = "./migrations")]
async fn review_notes_are_written_by_an_operator_audited_and_shown_as_follow_ups(pool: MySqlPool) {
    let run = failed_redis_down_run(&pool).await;
    let notes = "Breaker trip took 900 ms: lower the threshold\nRehearse the guided exit <with 5 engines>";

    let viewer = drills::set_review(&pool, &settings(Role::Viewer), run, notes).await.unwrap_err();
    assert!(matches!(viewer, DrillRunError::Refused(Refused::Role { role: Role::Viewer, .. })), "{viewer}");
    let blank = drills::set_review(&pool, &settings(Role::Oncall), run, " \n ").await.unwrap_err();
    assert!(matches!(blank, DrillRunError::NoNotes), "{blank}");
    let unknown = drills::set_review(&pool, &settings(Role::Oncall), run + 100, notes).await.unwrap_err();
    assert!(matches!(unknown, DrillRunError::NoSuchRun(_)), "{unknown}");
    assert_eq!(support::scalar(&pool, "SELECT COUNT(*) FROM audit_log").await, 0, "nothing refused is recorded");

    let review = drills::set_review(&pool, &settings(Role::Oncall), run, notes).await.unwrap();
    assert_eq!((review.notes.as_str(), review.by.as_str()), (notes, "test"));
    let (action, target, details): (String, String, serde_json::Value) =
        sqlx::query_as("SELECT action, target, details FROM audit_log ORDER BY id DESC LIMIT 1")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!((action.as_str(), target), ("drill.review", format!("drill_run:{run}")));
    assert_eq!(details["notes"], notes);

    let data = report::load(&pool, run).await.unwrap();
    let html = report::render(&data, Format::Html, Lang::En);
    assert!(html.contains("<li>[facilitator] Breaker trip took 900 ms: lower the threshold</li>"), "{html}");
    assert!(html.contains("<li>[facilitator] Rehearse the guided exit &lt;with 5 engines&gt;</li>"));
    assert!(html.contains("Facilitator&#39;s notes by test"));
    let md = report::render(&data, Format::Markdown, Lang::Zh);
    assert!(md.contains("- [主持人] Breaker trip took 900 ms: lower the threshold"), "{md}");
    assert!(md.contains("- [未通过的检查] recovery_s：实测 18.2 s，要求 <= 15 s。"), "{md}");
}
