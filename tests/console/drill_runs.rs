//! Drill runs in the database: a runner's heartbeat tells a live run from a dead one, a halt
//! reaches every running drill through its next heartbeat and is audited, and only those who
//! may operate the sale may halt.

use std::time::Duration;

use crate::support;
use sqlx::MySqlPool;
use stockguard_core::action::Refused;
use stockguard_core::drills::{self, DrillRunError, NewRun, RunStatus};
use stockguard_core::profile::{ConnectionSettings, EnvironmentKind, Role};

fn run(scenario: &str) -> NewRun<'_> {
    NewRun {
        scenario,
        runner: "host:4242",
        plan_hash: "ab12",
        seed: 7,
        parameters: serde_json::json!({ "buyers": 100 }),
    }
}

fn settings(role: Role) -> ConnectionSettings {
    let mut settings =
        ConnectionSettings::from_urls(EnvironmentKind::Sandbox, "mysql://unused/x", "redis://unused/", "sg");
    settings.role = role;
    settings
}

const STALE_AFTER: Duration = Duration::from_secs(3);

/// The run's runner was killed ten seconds ago: its last heartbeat is that old.
async fn died_ten_seconds_ago(pool: &MySqlPool, run: u64) {
    sqlx::query("UPDATE drill_runs SET heartbeat_at = NOW(3) - INTERVAL 10 SECOND WHERE id = ?")
        .bind(run)
        .execute(pool)
        .await
        .unwrap();
}

#[sqlx::test(migrations = "./migrations")]
async fn a_second_drill_on_a_sale_with_one_alive_is_refused_naming_the_running_one(pool: MySqlPool) {
    let running = drills::begin(&pool, &run("redis-down")).await.unwrap();
    let refused = drills::begin(&pool, &run("db-slow")).await.unwrap_err();
    assert!(
        matches!(&refused, DrillRunError::AnotherRunning { id, scenario, started_by }
            if *id == running && scenario == "redis-down" && started_by == "root"),
        "{refused}"
    );
    assert!(refused.to_string().contains(&format!("drill run {running} (redis-down")), "{refused}");
    // Two runners at once: one starts, the other is refused.
    let (run_a, run_b) = (run("a"), run("b"));
    let (a, b) = tokio::join!(drills::begin(&pool, &run_a), drills::begin(&pool, &run_b));
    assert!(a.is_err() && b.is_err(), "{running} is still alive: {a:?} {b:?}");
    drills::finish(&pool, running, RunStatus::Passed, &serde_json::json!({})).await.unwrap();
    let (a, b) = tokio::join!(drills::begin(&pool, &run_a), drills::begin(&pool, &run_b));
    assert_eq!([a.is_ok(), b.is_ok()].iter().filter(|ok| **ok).count(), 1, "{a:?} {b:?}");
    // Who started a run is the account the server saw, not what the runner said.
    let by: String = sqlx::query_scalar("SELECT started_by FROM drill_runs WHERE id = ?")
        .bind(running)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(by, "root");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_running_drill_whose_heartbeat_stopped_is_shown_dead_and_a_beating_one_alive(pool: MySqlPool) {
    // The first runner was killed ten seconds ago: its last heartbeat is that old.
    let stopped = drills::begin(&pool, &run("db-slow")).await.unwrap();
    died_ten_seconds_ago(&pool, stopped).await;
    let live = drills::begin(&pool, &run("redis-down")).await.unwrap();
    assert_eq!(drills::heartbeat(&pool, live).await.unwrap(), None, "no halt requested");

    let runs = drills::list(&pool, 10, STALE_AFTER).await.unwrap();
    let by_id = |id| runs.iter().find(|r| r.id == id).unwrap();
    assert_eq!((by_id(live).status, by_id(live).dead), (RunStatus::Running, false));
    assert_eq!((by_id(stopped).status, by_id(stopped).dead), (RunStatus::Running, true));
    assert!(by_id(stopped).heartbeat_age_s.unwrap() >= 10.0);
    assert_eq!((by_id(live).plan_hash.as_deref(), by_id(live).seed), (Some("ab12"), Some(7)));
    assert_eq!(runs[0].id, live, "newest first");

    drills::finish(&pool, live, RunStatus::Passed, &serde_json::json!({ "oversell": 0 })).await.unwrap();
    let finished = drills::list(&pool, 10, STALE_AFTER).await.unwrap().into_iter().find(|r| r.id == live).unwrap();
    assert_eq!((finished.status, finished.dead), (RunStatus::Passed, false), "a finished run is never dead");
    assert!(finished.finished_at.is_some());
    let again = drills::finish(&pool, live, RunStatus::Failed, &serde_json::json!({})).await.unwrap_err();
    assert!(matches!(again, DrillRunError::AlreadyFinished(id) if id == live), "the first verdict stands");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_halt_reaches_every_running_drill_on_its_next_heartbeat_and_is_audited(pool: MySqlPool) {
    // One drill at a time is alive; a dead one (its runner killed) is still RUNNING and is
    // asked too, so a runner that comes back stops at once.
    let done = drills::begin(&pool, &run("db-slow")).await.unwrap();
    drills::finish(&pool, done, RunStatus::Passed, &serde_json::json!({})).await.unwrap();
    let first = drills::begin(&pool, &run("redis-down")).await.unwrap();
    died_ten_seconds_ago(&pool, first).await;
    let second = drills::begin(&pool, &run("mq-backlog")).await.unwrap();

    let asked = drills::request_halt(&pool, &settings(Role::Facilitator), "customer traffic spiking").await.unwrap();
    assert_eq!(asked, vec![first, second], "the running drills, not the finished one");
    for id in [first, second] {
        let heard = drills::heartbeat(&pool, id).await.unwrap();
        assert_eq!(heard.as_deref(), Some("customer traffic spiking"));
        drills::finish(&pool, id, RunStatus::Halted, &serde_json::json!({})).await.unwrap();
    }
    let stopped = drills::heartbeat(&pool, first).await.unwrap_err();
    assert!(matches!(stopped, DrillRunError::AlreadyFinished(_)), "{stopped}");

    let (actor, claimed, action, reason, outcome, details): (
        String,
        String,
        String,
        String,
        String,
        serde_json::Value,
    ) = sqlx::query_as(
        "SELECT actor, claimed_actor, action, reason, outcome, details FROM audit_log ORDER BY id DESC LIMIT 1",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(
        (claimed.as_str(), action.as_str(), reason.as_str(), outcome.as_str()),
        ("test", "drill.halt", "customer traffic spiking", "requested")
    );
    assert_eq!(actor, "root", "the actor is the account the server saw, not the name the client gave");
    assert_eq!(details["runs"], serde_json::json!([first, second]));

    let nothing = drills::request_halt(&pool, &settings(Role::Oncall), "again").await.unwrap();
    assert!(nothing.is_empty(), "nothing left to halt, and no error");
    assert_eq!(support::scalar(&pool, "SELECT COUNT(*) FROM audit_log WHERE action = 'drill.halt'").await, 2);
}

#[sqlx::test(migrations = "./migrations")]
async fn a_viewer_or_a_read_only_profile_cannot_halt_and_a_halt_needs_a_reason(pool: MySqlPool) {
    let id = drills::begin(&pool, &run("redis-down")).await.unwrap();
    let viewer = drills::request_halt(&pool, &settings(Role::Viewer), "curious").await.unwrap_err();
    assert!(matches!(viewer, DrillRunError::Refused(Refused::Role { role: Role::Viewer, .. })), "{viewer}");
    let mut read_only = settings(Role::Oncall);
    read_only.read_only = true;
    let refused = drills::request_halt(&pool, &read_only, "stop").await.unwrap_err();
    assert!(matches!(refused, DrillRunError::Refused(Refused::ReadOnly { .. })), "{refused}");
    let blank = drills::request_halt(&pool, &settings(Role::Oncall), "  ").await.unwrap_err();
    assert!(matches!(blank, DrillRunError::NoReason), "{blank}");

    assert_eq!(drills::heartbeat(&pool, id).await.unwrap(), None, "nothing was requested");
    assert_eq!(support::scalar(&pool, "SELECT COUNT(*) FROM audit_log").await, 0, "and nothing recorded");
}
