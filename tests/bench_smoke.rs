//! The benchmarks still run (`--quick`), against a database of their own; the figures are
//! not judged here (that is BENCHMARKS.md's job), only that they are real numbers.

mod support;

use std::process::Command;

use sqlx::MySqlPool;
use support::TestRedis;

async fn bench(pool: &MySqlPool, redis: &TestRedis, which: &str) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_stockguard"))
        .args(["bench", which, "--quick", "--json"])
        .env_remove("STOCKGUARD_PROFILE")
        .env("STOCKGUARD_MYSQL_URL", support::mysql_url_of(pool).await)
        .env("STOCKGUARD_REDIS_URL", &redis.url)
        .env("STOCKGUARD_KEY_PREFIX", redis.keys.prefix())
        .env("STOCKGUARD_ENVIRONMENT", "sandbox")
        .output()
        .unwrap();
    assert!(out.status.success(), "bench {which}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn assert_positive_figures(report: &serde_json::Value) {
    for f in report["figures"].as_array().unwrap().iter().chain(report["ratios"].as_array().unwrap()) {
        let v = f["value"].as_f64().unwrap();
        assert!(v.is_finite() && v > 0.0, "{f}");
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn the_reserve_benchmark_runs_and_cleans_up(pool: MySqlPool) {
    let redis = TestRedis::new("bench1").await;
    let report = bench(&pool, &redis, "reserve").await;
    assert_eq!(report["figures"].as_array().unwrap().len(), 3);
    assert_positive_figures(&report);
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM inventory").fetch_one(&pool).await.unwrap();
    assert_eq!(left, 0, "the bench product is gone");
}

#[sqlx::test(migrations = "./migrations")]
async fn the_engine_benchmark_runs_and_cleans_up(pool: MySqlPool) {
    let redis = TestRedis::new("bench2").await;
    let report = bench(&pool, &redis, "engine").await;
    assert_eq!(report["ratios"].as_array().unwrap().len(), 2);
    assert_positive_figures(&report);
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders").fetch_one(&pool).await.unwrap();
    assert_eq!(left, 0, "the bench orders are gone");
}

#[sqlx::test(migrations = "./migrations")]
async fn benchmarks_refuse_a_production_connection(pool: MySqlPool) {
    let redis = TestRedis::new("bench3").await;
    let out = Command::new(env!("CARGO_BIN_EXE_stockguard"))
        .args(["bench", "reserve", "--quick"])
        .env_remove("STOCKGUARD_PROFILE")
        .env("STOCKGUARD_MYSQL_URL", support::mysql_url_of(&pool).await)
        .env("STOCKGUARD_REDIS_URL", &redis.url)
        .env("STOCKGUARD_ENVIRONMENT", "production")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("refuse a production profile"));
}

#[sqlx::test(migrations = "./migrations")]
async fn the_recon_benchmark_runs_and_drops_its_scratch_database(pool: MySqlPool) {
    let redis = TestRedis::new("bench4").await;
    let report = bench(&pool, &redis, "recon").await;
    assert_positive_figures(&report);
    let scratch = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|n| n.as_str()?.strip_prefix("scratch database: ")?.strip_suffix(" (dropped)").map(str::to_string))
        .expect("the report names its scratch database");
    assert!(scratch.starts_with("sg_bench_recon_"));
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?")
        .bind(&scratch)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(left, 0, "the scratch database is gone");
}
