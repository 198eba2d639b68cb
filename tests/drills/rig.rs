//! What the drill tests share: one drill at a time, runner options, a fault proxy service of
//! the test's own (it outlives the runner, so a test can look at what the runner left).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use stockguard_core::drills::plan::Plan;
use stockguard_engine::drill::runner::{RunOptions, Variant};
use stockguard_engine::drill::service::{self, Proxies, ProxyView};

static DRILLS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Holds the drill slot of this binary until dropped.
pub async fn one_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    DRILLS.lock().await
}

/// One engine, one product that does not sell out, Redis cut for two seconds of a short load
/// (8 s): a small drill whose fault bites, for the tests of what a run leaves and reports.
pub const REDIS_CUT: &str = r#"
name = "test-redis-cut"
title_en = "Redis cut, briefly"
title_zh = "短暂切断 Redis"
description = "For tests: a small run whose fault bites."
description_zh = "测试用：故障生效的一次小型运行。"
guided_exit = true
drain_s = 10

[rig]
engines = 1
products = [{ stock = 5000, per_user_limit = 1 }]

[load]
buyers = 800
rate = 100
duration_s = 8
seed = 51

[[faults]]
name = "redis-cut"
name_zh = "切断 Redis"
target = "redis"
action = "down"
at_s = 2
for_s = 2
"#;

pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_stockguard"))
}

pub fn options(plan_text: &str, variant: Variant, proxy_api: Option<String>) -> RunOptions {
    RunOptions {
        plan: Plan::parse(plan_text).expect("the test's drill file parses"),
        plan_text: plan_text.to_string(),
        variant,
        binary: binary(),
        proxy_api,
        lease: Duration::from_secs(5),
        confirm: false,
    }
}

/// A fault proxy service on a free port, faults leased for `lease`; its API address.
pub async fn proxy_service(lease: Duration) -> (String, Arc<Proxies>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let api = listener.local_addr().unwrap().to_string();
    let proxies = Proxies::new(Some(lease));
    tokio::spawn(service::serve(listener, proxies.clone(), std::future::pending()));
    (api, proxies)
}

/// Every proxy enabled and free of toxics.
pub fn clean(proxies: &Proxies) -> bool {
    let all = proxies.all();
    !all.is_empty() && all.values().all(|p: &ProxyView| p.enabled && p.toxics.is_empty())
}

/// Some proxy holds a fault.
pub fn faulted(proxies: &Proxies) -> bool {
    proxies.all().values().any(|p| !p.enabled || !p.toxics.is_empty())
}

/// Waits up to `within` for `cond`; how long it took, or `None`.
pub async fn within(within: Duration, mut cond: impl FnMut() -> bool) -> Option<Duration> {
    let start = tokio::time::Instant::now();
    while start.elapsed() < within {
        if cond() {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

/// A small drill: two engines, one product, a steady trickle of buyers, and a Redis latency
/// fault from the first second to the load's end (a fault may not outlive its load), so a
/// fault is in force whenever the test acts.
pub const LONG_FAULT: &str = r#"
name = "test-long-fault"
title_en = "A fault in force throughout"
title_zh = "全程注入故障"
description = "For tests: a fault is in force while the test acts."
guided_exit = false
drain_s = 10

[rig]
engines = 2
products = [{ stock = 300, per_user_limit = 1 }]

[load]
buyers = 6000
rate = 150
duration_s = 40
seed = 99

[[faults]]
name = "20 ms on every Redis reply"
target = "redis"
action = "latency"
at_s = 1
for_s = 39
latency_ms = 20
"#;
