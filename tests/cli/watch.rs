//! `stockguard watch --metrics-listen`: under a running load, its scrape says what a `recon
//! --json` taken at the same time says, product by product; an acknowledgement shows in the
//! scrape and the watcher closes it once the rewrite clears the drift; the shipped Grafana
//! dashboard and alert rules ask only for metrics that are served; the rules pass
//! `promtool check rules`; an oversold product gets its compensation case from the watcher
//! alone, with no window open.

use crate::sale;
use crate::support;

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::alerts::{self, acks, Thresholds};
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::rewrite::{self, RewriteRequest};
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use stockguard_engine::load::{self, LoadConfig};
use support::TestRedis;

const SELLING: [u64; 2] = [1, 3];
const DRIFTING: u64 = 2;

/// `name{product="P"...} value` lines of one metric, by product (for `status`, only the
/// status whose value is 1).
fn by_product(scrape: &str, name: &str) -> HashMap<u64, String> {
    let mut out = HashMap::new();
    for line in scrape.lines().filter(|l| l.starts_with(&format!("{name}{{"))) {
        let (labels, value) = line.rsplit_once(' ').unwrap();
        let label = |key: &str| {
            labels.split(&format!("{key}=\"")).nth(1).and_then(|rest| rest.split('"').next()).map(str::to_string)
        };
        let product: u64 = label("product").unwrap().parse().unwrap();
        match label("status") {
            Some(status) if value == "1" => {
                out.insert(product, status);
            }
            Some(_) => {}
            None => {
                out.insert(product, value.to_string());
            }
        }
    }
    out
}

async fn scrape(addr: &str) -> Option<String> {
    reqwest::get(format!("http://{addr}/metrics")).await.ok()?.text().await.ok()
}

async fn scrape_url(url: &str) -> String {
    reqwest::get(url).await.unwrap().text().await.unwrap()
}

/// The metric names a scrape serves (a histogram's `_bucket`, `_sum` and `_count` too).
fn metric_names(scrape: &str) -> Vec<String> {
    scrape
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .flat_map(|l| {
            let (name, kind) = l.split_once(' ').unwrap();
            let mut names = vec![name.to_string()];
            if kind == "histogram" {
                names.extend(["_bucket", "_sum", "_count"].map(|s| format!("{name}{s}")));
            }
            names
        })
        .collect()
}

/// Every `stockguard_...` identifier in a text (PromQL in a dashboard or a rules file).
fn stockguard_names(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .filter(|w| w.starts_with("stockguard_"))
        .map(str::to_string)
        .collect()
}

/// Waits (10 s at most) until the watcher's scrape satisfies `check`.
async fn wait_for_scrape(addr: &str, check: impl Fn(&str) -> bool) {
    for _ in 0..100 {
        if scrape(addr).await.is_some_and(|s| check(&s)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the watcher's scrape never showed what was expected: {:?}", scrape(addr).await);
}

fn revision(scrape: &str) -> f64 {
    scrape
        .lines()
        .find_map(|l| l.strip_prefix("stockguard_reading_revision "))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

#[sqlx::test(migrations = "./migrations")]
async fn the_watchers_scrape_matches_a_recon_taken_under_load(pool: MySqlPool) {
    let redis = TestRedis::new("watch").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    for p in [1, 2, 3] {
        sale::open_sale(&conns, p, 100_000, 1).await;
    }
    // Redis three units high on one product: a drift both must report.
    let mut r = redis.conn().await;
    let _: i64 = redis::cmd("INCRBY").arg(conns.keys.stock(DRIFTING)).arg(3).query_async(&mut r).await.unwrap();

    let config = EngineConfig { per_user_rate: 0, ..EngineConfig::default() };
    let state = EngineState::new(pool.clone(), conns.redis.clone(), conns.keys.clone(), config);
    let (engine_url, stop_engine, engine) = sale::spawn_engine(state).await;
    let engine_metrics = format!("{engine_url}/metrics");
    let cfg = LoadConfig {
        target: engine_url,
        products: SELLING.to_vec(),
        buyers: 6_000,
        rate: 500,
        duration: Duration::from_secs(8),
        concurrency: 16,
        drain_timeout: Duration::from_secs(30),
    };
    let load_pool = pool.clone();
    let load = tokio::spawn(async move { load::run(&load_pool, &cfg, &|_, _| {}).await.unwrap() });

    let mysql_url = support::mysql_url_of(&pool).await;
    let env = [
        ("STOCKGUARD_MYSQL_URL", mysql_url.as_str()),
        ("STOCKGUARD_REDIS_URL", redis.url.as_str()),
        ("STOCKGUARD_KEY_PREFIX", redis.keys.prefix()),
        ("STOCKGUARD_ENVIRONMENT", "sandbox"),
    ];
    let addr = format!("127.0.0.1:{}", support::free_port());
    let mut watcher = Command::new(env!("CARGO_BIN_EXE_stockguard"));
    watcher.args(["watch", "--metrics-listen", &addr, "--interval-ms", "200", "--settle-acknowledgements"]);
    for k in support::PROFILE_OVERRIDES {
        watcher.env_remove(k);
    }
    let mut watcher = watcher.envs(env).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();

    // A few readings in, with the sale going on.
    let mut seen = String::new();
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if let Some(s) = scrape(&addr).await.filter(|s| revision(s) >= 3.0) {
            seen = s;
            break;
        }
    }
    assert!(revision(&seen) >= 3.0, "the watcher serves readings");
    let recon = Command::new(env!("CARGO_BIN_EXE_stockguard"))
        .args(["recon", "--json"])
        .envs(env)
        .env_remove("STOCKGUARD_PROFILE")
        .output()
        .unwrap();
    assert!(recon.status.success(), "{}", String::from_utf8_lossy(&recon.stderr));
    let now = scrape(&addr).await.unwrap();
    let report: serde_json::Value = serde_json::from_slice(&recon.stdout).unwrap();
    let readings = report.as_array().or_else(|| report["readings"].as_array()).expect("readings in the JSON");

    // Drift and status are exact as of each reading's cut, so readings taken at different
    // instants of a live sale agree on them; in-flight units move and are not compared.
    let (drift, status) = (by_product(&now, "stockguard_drift_units"), by_product(&now, "stockguard_product_status"));
    assert_eq!(readings.len(), 3);
    for reading in readings {
        let p = reading["product_id"].as_u64().unwrap();
        assert_eq!(drift[&p].parse::<f64>().unwrap() as i64, reading["drift"].as_i64().unwrap(), "product {p} drift");
        assert_eq!(status[&p], reading["status"].as_str().unwrap(), "product {p} status");
    }
    assert_eq!(drift[&DRIFTING], "3");
    assert_eq!(status[&DRIFTING], "REDIS_HIGH");
    let confirmed = by_product(&now, "stockguard_drift_confirmed");
    assert_eq!(confirmed[&DRIFTING], "1", "two readings in a row agree: confirmed");
    assert_eq!(confirmed[&1], "0");

    // The shipped dashboard and alert rules ask only for metrics the watcher and the engine
    // serve.
    let served: std::collections::HashSet<String> =
        metric_names(&now).into_iter().chain(metric_names(&scrape_url(&engine_metrics).await)).collect();
    for (file, text) in [
        ("deploy/grafana/stockguard-sale.json", include_str!("../../deploy/grafana/stockguard-sale.json")),
        ("deploy/prometheus/alerts.yml", include_str!("../../deploy/prometheus/alerts.yml")),
    ] {
        for name in stockguard_names(text) {
            assert!(served.contains(&name), "{file} asks for {name}, which nothing serves");
        }
    }

    // Someone takes the drift: the scrape says so. The rewrite repairs it: the watcher closes
    // the acknowledgement by itself (audited) and the alert leaves the scrape.
    let drift_alert = format!("drift:{DRIFTING}");
    let now_firing = alerts::now::firing(&conns, &Thresholds::default(), Duration::from_millis(50)).await.unwrap();
    acks::acknowledge(&conns, &now_firing, &drift_alert, "on it: a manual load went to Redis only", None)
        .await
        .unwrap();
    let acknowledged = format!("stockguard_alert_acknowledged{{alert=\"{drift_alert}\",kind=\"DRIFT_CONFIRMED\"}} 1");
    wait_for_scrape(&addr, |s| s.contains(&acknowledged)).await;
    rewrite::rewrite(&conns, &RewriteRequest::new(DRIFTING, "drift seen by the watcher")).await.unwrap();
    wait_for_scrape(&addr, |s| !s.contains(&format!("alert=\"{drift_alert}\""))).await;
    let closed: Vec<String> = sqlx::query_scalar("SELECT target FROM audit_log WHERE action = 'alert.ack.closed'")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(closed, [drift_alert], "the watcher closed the acknowledgement once, audited");

    let sold = load.await.unwrap();
    assert!(sold.accepted > 0, "the sale went on meanwhile: {sold:?}");
    assert_eq!(sold.verdict.lost, 0);
    let _ = stop_engine.send(());
    let _ = engine.await;
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(watcher.id() as i32), nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = watcher.wait().unwrap();
    assert!(status.success(), "the watcher stops cleanly on SIGTERM: {status:?}");
}

#[sqlx::test(migrations = "./migrations")]
async fn an_oversold_product_opens_its_compensation_case_from_the_watcher_with_no_window(pool: MySqlPool) {
    const P: u64 = 7;
    let redis = TestRedis::new("watchcomp").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    sale::put_on_sale(&pool, &mut conns.redis.clone(), &conns.keys, P, (10, 0), 1).await;
    support::oversold::seed(&pool, P, 10, 13, 1_999, "W").await;

    let mysql_url = support::mysql_url_of(&pool).await;
    let addr = format!("127.0.0.1:{}", support::free_port());
    let mut watcher = Command::new(env!("CARGO_BIN_EXE_stockguard"));
    watcher.args(["watch", "--metrics-listen", &addr, "--interval-ms", "100"]);
    for k in support::PROFILE_OVERRIDES {
        watcher.env_remove(k);
    }
    let mut watcher = watcher
        .envs([
            ("STOCKGUARD_MYSQL_URL", mysql_url.as_str()),
            ("STOCKGUARD_REDIS_URL", redis.url.as_str()),
            ("STOCKGUARD_KEY_PREFIX", redis.keys.prefix()),
            ("STOCKGUARD_ENVIRONMENT", "sandbox"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    // The case is opened once the oversell is confirmed; a few more readings later there is
    // still one, however many ticks confirm it.
    let cases = async || stockguard_core::compensation::read::list(&pool, None).await.unwrap();
    support::waits::wait_for("the watcher opens the case", Duration::from_secs(30), async || !cases().await.is_empty())
        .await;
    let opened_at = revision(&scrape(&addr).await.unwrap_or_default());
    wait_for_scrape(&addr, |s| revision(s) >= opened_at + 3.0).await;
    let cases = cases().await;
    assert_eq!(cases.len(), 1, "one case per incident: {cases:?}");
    assert_eq!((cases[0].product_id.clone(), cases[0].lines), (P.into(), 3), "the three orders beyond 10 units");

    nix::sys::signal::kill(nix::unistd::Pid::from_raw(watcher.id() as i32), nix::sys::signal::Signal::SIGTERM).unwrap();
    assert!(watcher.wait().unwrap().success());
}

/// `promtool`, from PATH or where `make deps` puts it.
fn promtool() -> std::path::PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cache")));
    support::which("promtool")
        .or_else(|| cache.map(|c| c.join("stockguard/bin/promtool")).filter(|p| p.is_file()))
        .expect("promtool is missing: `make deps` (scripts/install-deps.sh) fetches it")
}

#[test]
fn the_grafana_dashboard_is_a_dashboard_grafana_can_import() {
    let dashboard: serde_json::Value =
        serde_json::from_str(include_str!("../../deploy/grafana/stockguard-sale.json")).expect("valid JSON");
    for key in ["title", "uid", "schemaVersion", "panels", "templating"] {
        assert!(!dashboard[key].is_null(), "a dashboard has `{key}`");
    }
    let panels = dashboard["panels"].as_array().unwrap();
    let mut ids = std::collections::HashSet::new();
    for panel in panels {
        assert!(ids.insert(panel["id"].as_u64().expect("a panel id")), "panel ids are unique");
        for key in ["type", "title", "gridPos", "targets", "datasource"] {
            assert!(!panel[key].is_null(), "panel {} has `{key}`", panel["id"]);
        }
        for target in panel["targets"].as_array().unwrap() {
            assert!(target["expr"].as_str().is_some_and(|e| !e.is_empty()), "every target has a query");
        }
    }
}

#[test]
fn the_shipped_alert_rules_pass_promtool() {
    let rules = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/prometheus/alerts.yml");
    let out = Command::new(promtool()).args(["check", "rules", rules]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("SUCCESS: 9 rules found"), "{said}");
}
