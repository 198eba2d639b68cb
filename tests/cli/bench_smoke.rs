//! The benchmarks still run (`--quick`), against a database of their own; the figures are
//! not judged here (that is BENCHMARKS.md's job), only that they are real numbers.

use crate::support;

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
    assert_positive(&report["figures"]);
    assert_positive(&report["ratios"]);
}

fn assert_positive(figures: &serde_json::Value) {
    for f in figures.as_array().unwrap() {
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
async fn the_engine_benchmark_measures_vouching_off_healthy_and_stalled_and_drops_its_scratch_database(
    pool: MySqlPool,
) {
    let redis = TestRedis::new("bench2").await;
    let report = bench(&pool, &redis, "engine").await;
    assert_eq!(report["ratios"].as_array().unwrap().len(), 2 + 6, "ceiling, persist, and vouching's six");
    assert_positive_figures(&report);
    // Vouching off, on with a healthy replica, on with it stalled: each sold something, end to
    // end too (its orders in the DB), at a CPU cost the machine measured, and the stalled run
    // wrote its orders to the DB before answering (its note says how many).
    let figures = report["figures"].as_array().unwrap();
    for case in ["vouching off", "vouching on, replica healthy", "vouching on, replica stalled"] {
        for (what, unit) in [("accepted orders/s", "orders/s"), ("end to end", "orders/s"), ("machine CPU", "us")] {
            let row = figures
                .iter()
                .find(|f| {
                    let name = f["name"].as_str().unwrap();
                    name.starts_with(case) && name.contains(what) && f["unit"] == unit
                })
                .unwrap_or_else(|| panic!("no {what} row for {case}: {figures:?}"));
            assert!(row["value"].as_f64().unwrap() > 0.0, "{row}");
        }
    }
    let stalled_note = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .find(|n| n.starts_with("vouching run, vouching on, replica stalled"))
        .expect("a note of the stalled run");
    assert!(stalled_note.contains("; 100 of 100 accepted written through"), "{stalled_note}");
    assert_scratch_database_dropped(&pool, &report, "sg_bench_engine_").await;
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders").fetch_one(&pool).await.unwrap();
    assert_eq!(left, 0, "the profile's own database is untouched");
    let mut r = redis.conn().await;
    let keys: Vec<String> =
        redis::cmd("KEYS").arg(format!("{}:*", redis.keys.prefix())).query_async(&mut r).await.unwrap();
    assert!(keys.is_empty(), "the bench products' Redis keys are gone: {keys:?}");
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

/// The scratch database the report names is gone from the server.
async fn assert_scratch_database_dropped(pool: &MySqlPool, report: &serde_json::Value, prefix: &str) {
    let scratch = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|n| n.as_str()?.strip_prefix("scratch database: ")?.strip_suffix(" (dropped)").map(str::to_string))
        .expect("the report names its scratch database");
    assert!(scratch.starts_with(prefix), "{scratch}");
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?")
        .bind(&scratch)
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(left, 0, "the scratch database is gone");
}

#[sqlx::test(migrations = "./migrations")]
async fn the_recon_benchmark_runs_and_drops_its_scratch_database(pool: MySqlPool) {
    let redis = TestRedis::new("bench4").await;
    let report = bench(&pool, &redis, "recon").await;
    assert_positive_figures(&report);
    assert_scratch_database_dropped(&pool, &report, "sg_bench_recon_").await;
}

#[sqlx::test(migrations = "./migrations")]
async fn the_deduct_benchmark_sells_the_stock_exactly_once_except_naively_and_counts_it_in_the_db(pool: MySqlPool) {
    let redis = TestRedis::new("bench5").await;
    let report = bench(&pool, &redis, "deduct").await;
    let stock = report["plan"]["initial_stock"].as_i64().unwrap();
    let buyers = report["plan"]["buyers"].as_u64().unwrap();
    let sizes = report["plan"]["connections"].as_array().unwrap().len();
    let rounds = report["plan"]["rounds"].as_u64().unwrap() as usize;
    assert_eq!(report["cells"].as_array().unwrap().len(), 4 * sizes, "every strategy at every pool size");
    assert_eq!(
        report["ratios"].as_array().unwrap().len(),
        3 * sizes,
        "three strategies against the conditional update"
    );
    let rows = report["sales"].as_array().unwrap();
    assert_eq!(rows.len(), 4 * sizes * rounds, "one sale per strategy, pool size and round");
    let int = |row: &serde_json::Value, field: &str| row[field].as_i64().unwrap_or_else(|| panic!("{field} in {row}"));
    for row in rows {
        let units = int(row, "units_in_db");
        let final_stock = int(row, "final_stock");
        assert_eq!(
            int(row, "committed") + int(row, "gave_up") + int(row, "sold_out"),
            buyers as i64,
            "every buyer got one answer: {row}"
        );
        assert_eq!(int(row, "orders_in_db"), int(row, "committed"), "the DB holds every committed order: {row}");
        assert_eq!(int(row, "oversold"), (units - stock).max(0), "oversold is orders minus stock as counted: {row}");
        assert_eq!(int(row, "lost_deductions"), units + final_stock - stock, "{row}");
        assert!(row["committed_per_s"].as_f64().unwrap() > 0.0, "{row}");
        match row["strategy"].as_str().unwrap() {
            "conditional_update" | "for_update" => {
                assert_eq!(units, stock, "a locked deduction sells exactly the stock: {row}");
                assert_eq!(final_stock, 0, "{row}");
                assert_eq!(int(row, "oversold"), 0, "{row}");
                assert_eq!(int(row, "lost_deductions"), 0, "{row}");
            }
            "optimistic" => {
                assert_eq!(int(row, "oversold"), 0, "a version check never oversells: {row}");
                assert_eq!(int(row, "lost_deductions"), 0, "{row}");
                assert!(final_stock >= 0, "{row}");
            }
            "naive" => assert_eq!(int(row, "retries"), 0, "{row}"),
            other => panic!("unknown strategy {other}"),
        }
    }
    for cell in report["cells"].as_array().unwrap() {
        if cell["strategy"] != "naive" {
            assert_eq!(cell["oversold_worst"], 0, "{cell}");
        }
    }
    assert_positive(&report["ratios"]);
    assert_scratch_database_dropped(&pool, &report, "sg_bench_deduct_").await;
}

#[sqlx::test(migrations = "./migrations")]
async fn the_reserve_benchmark_never_puts_the_redis_password_on_a_command_line(pool: MySqlPool) {
    let redis = TestRedis::new("bench4").await;
    // A stand-in `redis-benchmark` first on PATH records the command line it was given.
    let bin = tempfile::tempdir().unwrap();
    let recorded = bin.path().join("args");
    let fake = bin.path().join("redis-benchmark");
    std::fs::write(&fake, format!("#!/bin/sh\necho \"$@\" >> '{}'\nexit 1\n", recorded.display())).unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // Redis's `default` user without a password accepts any password given with its name.
    let mut url = url::Url::parse(&redis.url).unwrap();
    url.set_username("default").unwrap();
    url.set_password(Some("hunter2")).unwrap();
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());

    let out = Command::new(env!("CARGO_BIN_EXE_stockguard"))
        .args(["bench", "reserve", "--quick"])
        .env_remove("STOCKGUARD_PROFILE")
        .env("PATH", path)
        .env("STOCKGUARD_MYSQL_URL", support::mysql_url_of(&pool).await)
        .env("STOCKGUARD_REDIS_URL", url.as_str())
        .env("STOCKGUARD_KEY_PREFIX", redis.keys.prefix())
        .env("STOCKGUARD_ENVIRONMENT", "sandbox")
        .output()
        .unwrap();

    let args = std::fs::read_to_string(&recorded).unwrap_or_default();
    assert!(!args.contains("hunter2"), "the password was on a command line: {args}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("password"), "refused, saying why: {stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

#[sqlx::test(migrations = "./migrations")]
async fn the_cluster_benchmark_runs_beside_one_server_and_drops_its_scratch_database(pool: MySqlPool) {
    let redis = TestRedis::new("bench5").await;
    let report = bench(&pool, &redis, "cluster").await;
    let names: Vec<&str> = report["figures"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert!(names.iter().any(|n| n.starts_with("cluster, three engines")), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("one server, one engine")), "{names:?}");
    assert_positive_figures(&report);
    assert_scratch_database_dropped(&pool, &report, "sg_bench_cluster_").await;
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM inventory").fetch_one(&pool).await.unwrap();
    assert_eq!(left, 0, "the profile's own database is untouched");
}

#[sqlx::test(migrations = "./migrations")]
async fn the_exit_benchmark_measures_both_rebuild_paths_with_no_drift_and_drops_its_scratch_database(pool: MySqlPool) {
    let redis = TestRedis::new("bench6").await;
    let report = bench(&pool, &redis, "exit").await;
    let figures = report["figures"].as_array().unwrap();
    let paused: Vec<&serde_json::Value> =
        figures.iter().filter(|f| f["name"].as_str().unwrap().contains("sales paused")).collect();
    let drifting: Vec<&serde_json::Value> =
        figures.iter().filter(|f| f["name"].as_str().unwrap().contains("drifting")).collect();
    assert_eq!(paused.len(), 4, "two sizes, two paths");
    assert!(paused.iter().all(|f| f["value"].as_f64().unwrap() > 0.0), "{paused:?}");
    assert_eq!(drifting.len(), 4);
    assert!(drifting.iter().all(|f| f["value"].as_f64() == Some(0.0)), "no drift after any exit: {drifting:?}");
    assert_eq!(report["ratios"].as_array().unwrap().len(), 2);
    assert_positive(&report["ratios"]);
    assert_scratch_database_dropped(&pool, &report, "sg_bench_exit_").await;
    let mut r = redis.conn().await;
    let keys: Vec<String> =
        redis::cmd("KEYS").arg(format!("{}:*", redis.keys.prefix())).query_async(&mut r).await.unwrap();
    assert!(keys.is_empty(), "the bench products' Redis keys are gone: {keys:?}");
}

#[sqlx::test(migrations = "./migrations")]
async fn the_adapter_benchmark_reads_both_sales_exactly_and_leaves_no_database_or_key_behind(pool: MySqlPool) {
    let redis = TestRedis::new("bench7").await;
    let report = bench(&pool, &redis, "adapter").await;
    let figures = report["figures"].as_array().unwrap();
    let value = |name: &str| {
        figures
            .iter()
            .find(|f| f["name"].as_str().unwrap().starts_with(name))
            .unwrap_or_else(|| panic!("no row {name}: {figures:?}"))["value"]
            .as_f64()
            .unwrap()
    };
    let products = value("products per sale");
    assert_eq!(products, 50.0, "--quick reads 50 products");
    assert!(value("native reading, all products") > 0.0);
    assert!(value("adapter reading, all products, 2 passes") > 0.0);
    // Both readings were right: every product OK (and settled over the adapter), and the
    // orders in flight (one product in ten) counted once.
    assert_eq!(value("native reading: products OK"), products);
    assert_eq!(value("adapter reading: products OK and settled"), products);
    assert_eq!(value("in-flight units counted once, native"), 5.0);
    assert_eq!(value("in-flight units counted once, adapter"), 5.0);
    let ratios = report["ratios"].as_array().unwrap();
    assert_eq!(ratios.len(), 1);
    assert_eq!(ratios[0]["name"], "adapter reading / native reading");
    assert_positive_figures(&report);
    assert_scratch_database_dropped(&pool, &report, "sg_bench_adapter_").await;
    let mut r = redis.conn().await;
    let keys: Vec<String> =
        redis::cmd("KEYS").arg(format!("{}:*", redis.keys.prefix())).query_async(&mut r).await.unwrap();
    assert!(keys.is_empty(), "the bench's Redis keys are gone: {keys:?}");
}
