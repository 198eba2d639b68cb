//! A drill run as a runner leaves it, for the tests that report on runs: the redis-down drill
//! with its file in the parameters, a timeline (Redis cut from 4 s to 12 s, the engines on
//! the DB path within a second, drift and backlog during the cut, the guided exit after it)
//! and a summary that fails on recovery time.

use sqlx::MySqlPool;
use stockguard_core::drills::events::{self, Event, LoadSecond, TickFigures};
use stockguard_core::drills::plan::Plan;
use stockguard_core::drills::summary::{AffectedOrder, Check, Figures, Summary};
use stockguard_core::drills::{self, NewRun, RunStatus};

pub const FAULT: &str = "Redis refused and cut";

fn check(name: &str, kind: &str, passed: bool, figure: &str, bound: &str) -> Check {
    Check { name: name.into(), kind: kind.into(), passed, figure: figure.into(), bound: bound.into() }
}

/// The redis-down drill's summary: nothing oversold, but the sale came back 3 s late.
pub fn summary(p99_ms: f64, recovery_s: f64, oversold_units: i64) -> Summary {
    Summary {
        figures: Figures {
            sent: 32_000,
            accepted: 6_000,
            oversold_units,
            failed_back: 1,
            buyer_error_rate: 0.012,
            p50_ms: 4.0,
            p99_ms,
            time_to_db_path_ms: Some(900),
            recovery_s: Some(recovery_s),
            drift_peak: 37,
            backlog_peak: 420,
            switch_propagation_ms: Some(300),
            ..Figures::default()
        },
        checks: vec![
            check("no_oversell", "invariant", oversold_units == 0, &format!("{oversold_units} units"), "0 units"),
            check("time_to_db_path_ms", "slo", true, "900 ms", "<= 1000 ms"),
            check("recovery_s", "slo", recovery_s <= 15.0, &format!("{recovery_s} s"), "<= 15 s"),
        ],
        affected_orders: vec![AffectedOrder {
            order_no: "DRL20261201000042".into(),
            product_id: 901,
            user_id: 7731,
            buy_count: 1,
            why: "FAILED".into(),
        }],
        products: vec![901, 902],
        schedule_hash: "5c4e".into(),
        reason: Some("recovery_s: 18.2 s against <= 15 s".into()),
        variant: None,
    }
}

/// Starts a redis-down run as its runner would, with the drill file in its parameters.
pub async fn begin(pool: &MySqlPool) -> u64 {
    let (_, text) = Plan::builtin("redis-down").unwrap();
    let run = NewRun {
        scenario: "redis-down",
        runner: "host:4242",
        plan_hash: &Plan::hash(&text),
        seed: 20261201,
        parameters: serde_json::json!({ "plan_text": text, "variant": null, "products": [901, 902] }),
    };
    drills::begin(pool, &run).await.unwrap()
}

/// A run's timeline: Redis cut from 4 s to 12 s, the engines on the DB path within a
/// second, drift and backlog during the cut, the guided exit after it.
pub async fn record_timeline(pool: &MySqlPool, run: u64) {
    let cut = |s: i64| (4..12).contains(&s);
    let mut timeline = vec![
        (-2_000, Event::Phase { phase: "rig".into() }),
        (0, Event::Phase { phase: "load".into() }),
        (4_000, Event::FaultInjected { fault: FAULT.into(), target: "redis".into(), action: "down".into() }),
        (4_600, Event::Mode { redis_path: 1, db_path: 2, unknown: 0 }),
        (4_900, Event::Mode { redis_path: 0, db_path: 3, unknown: 0 }),
        (12_000, Event::FaultRestored { fault: FAULT.into() }),
        (13_000, Event::Repair { what: "guided exit".into(), outcome: "back on Redis <3 engines>".into() }),
        (13_500, Event::Mode { redis_path: 3, db_path: 0, unknown: 0 }),
        (16_500, Event::Phase { phase: "drain".into() }),
        (20_000, Event::Phase { phase: "verify".into() }),
    ];
    for s in 1..=16 {
        let errors = if cut(s) { [("DEGRADED_BUSY".to_string(), 40)].into() } else { Default::default() };
        let second = LoadSecond {
            sent: 2_000,
            skipped: 0,
            accepted: 375,
            refused: if cut(s) { 1_585 } else { 1_625 },
            errors,
            p50_ms: 4.0,
            p99_ms: if cut(s) { 180.0 } else { 25.0 },
        };
        timeline.push((s * 1_000, Event::Load(second)));
    }
    for s in 1..=20 {
        let drift = if cut(s) { 5 * (s - 3) } else { 0 };
        let tick = TickFigures {
            drift,
            drift_max_abs: drift,
            backlog: if cut(s) { 60 * (s - 3) as u64 } else { 0 },
            inflight: if cut(s) { 12 } else { 0 },
            redis_path: if cut(s) { 0 } else { 3 },
            db_path: if cut(s) { 3 } else { 0 },
            redis_reachable: !cut(s),
            ..TickFigures::default()
        };
        timeline.push((s * 1_000 + 500, Event::Tick(tick)));
    }
    timeline.sort_by_key(|(offset, _)| *offset);
    for (offset_ms, event) in &timeline {
        events::record(pool, run, *offset_ms, event).await.unwrap();
    }
}

/// A run that ended with its summary (no timeline: a comparison reads summaries only).
pub async fn finished_run(pool: &MySqlPool, status: RunStatus, summary: &Summary) -> u64 {
    let run = begin(pool).await;
    drills::finish(pool, run, status, &serde_json::to_value(summary).unwrap()).await.unwrap();
    run
}

/// The redis-down run of the module docs: its timeline recorded, then failed on recovery time.
pub async fn failed_redis_down_run(pool: &MySqlPool) -> u64 {
    let run = begin(pool).await;
    record_timeline(pool, run).await;
    let summary = serde_json::to_value(summary(180.0, 18.2, 0)).unwrap();
    drills::finish(pool, run, RunStatus::Failed, &summary).await.unwrap();
    run
}
