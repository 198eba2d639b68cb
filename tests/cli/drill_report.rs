//! `stockguard drill report|compare`: a run's report to standard output or a file, in the
//! format and language asked for; a comparison as JSON for a script; an unknown run named.

use crate::commands::{assert_one_line_error, sale_env, stockguard};
use crate::support::drill_run::{failed_redis_down_run, finished_run, summary};
use stockguard_core::drills::RunStatus;

#[sqlx::test(migrations = "./migrations")]
async fn drill_report_prints_markdown_in_chinese_or_writes_a_self_contained_html_file(pool: sqlx::MySqlPool) {
    let env = sale_env(&pool).await;
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let run = failed_redis_down_run(&pool).await.to_string();

    let out = stockguard(&["drill", "report", &run, "--format", "md", "--lang", "zh"], &env);
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(md.starts_with("# 秒杀中途 Redis 宕机 · 演练报告"), "{md}");
    assert!(md.contains("| 检查 | 类别 | 结论 | 实测 | 要求 |") && md.contains("DRL20261201000042"));

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.html");
    let out = stockguard(&["drill", "report", &run, "--out", file.to_str().unwrap()], &env);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "the report went to the file");
    let html = std::fs::read_to_string(&file).unwrap();
    assert_eq!(html.matches("<svg").count(), 5);
    assert!(html.contains("Orders that need compensation"), "English by default");

    let out = stockguard(&["drill", "report", "987654"], &env);
    assert_one_line_error(&out, "drill run 987654 does not exist");
}

#[sqlx::test(migrations = "./migrations")]
async fn drill_compare_lists_the_regressions_of_the_second_run_and_exits_3_on_one(pool: sqlx::MySqlPool) {
    let env = sale_env(&pool).await;
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let a = finished_run(&pool, RunStatus::Passed, &summary(100.0, 10.0, 0)).await.to_string();
    let b = finished_run(&pool, RunStatus::Failed, &summary(130.0, 10.5, 0)).await.to_string();

    let out = stockguard(&["drill", "compare", &a, &b, "--json"], &env);
    assert_eq!(out.status.code(), Some(3), "a regression fails, so CI can gate on it: {out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 regression(s) against the baseline: p99_ms"));
    let comparison: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(comparison["regressions"], serde_json::json!(["p99_ms"]), "recovery 5% worse is within 20%");
    assert_eq!((comparison["same_plan"].as_bool(), comparison["b"]["status"].as_str()), (Some(true), Some("FAILED")));

    let out = stockguard(&["drill", "compare", &a, &b, "--threshold", "0.5"], &env);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("no regression") && !table.contains("REGRESSED"), "{table}");
    assert!(out.status.success(), "no regression, exit 0");
    let out = stockguard(&["drill", "compare", &a, &b, "--threshold=-1"], &env);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("not a share of 0 or more"));
}
