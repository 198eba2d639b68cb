//! What a drill leaves once its run is over (issue 26): its engines' heartbeats, its rig's
//! switch row, its products' keys. Tried with the roles' own accounts, by raw SQL as a hostile
//! facilitator would: the facilitator removes an ended rig's heartbeats, and never a sale
//! engine's nor a running drill's; a dead run's leftovers lapse when someone who may operate
//! the sale looks, and the sale's own switch rows are untouched.

use std::time::Duration;

use crate::roles::{applied, mysql_number, People, COMMAND_DENIED};
use crate::support::{self, TestRedis};

use sqlx::MySqlPool;
use stockguard_core::connect::Connections;
use stockguard_core::drills::{self, NewRun, RunStatus, Swept};
use stockguard_core::profile::Role;
use stockguard_core::roles::SaleRole;
use stockguard_core::switch::store::{self, Changer};
use stockguard_core::switch::{Home, Mode, Scope};

const LEASE: Duration = Duration::from_secs(3);

fn run(scenario: &str) -> NewRun<'_> {
    NewRun { scenario, runner: "host:4242", plan_hash: "ab12", seed: 7, parameters: serde_json::json!({}) }
}

/// A heartbeat row as an engine of `home` writes it, beating now.
async fn beats(pool: &MySqlPool, instance: &str, home: Home) {
    sqlx::query(
        "INSERT INTO engine_heartbeats (instance_id, listen_addr, started_at, last_seen, home) \
         VALUES (?, '127.0.0.1:1', NOW(3), NOW(3), ?)",
    )
    .bind(instance)
    .bind(home.scope().key())
    .execute(pool)
    .await
    .unwrap();
}

async fn heartbeats(pool: &MySqlPool) -> Vec<String> {
    sqlx::query_scalar("SELECT instance_id FROM engine_heartbeats ORDER BY instance_id").fetch_all(pool).await.unwrap()
}

/// Connections as the role's person, acting in that role.
async fn acting(people: &People, role: SaleRole, as_role: Role, pool: &MySqlPool, redis: &TestRedis) -> Connections {
    let mut settings = people.settings(role, pool, redis).await;
    settings.role = as_role;
    Connections::open(settings).await.unwrap()
}

async fn switch_rows(pool: &MySqlPool) -> Vec<(String, String, u64)> {
    sqlx::query_as("SELECT scope, CAST(mode AS CHAR), revision FROM degrade_switch ORDER BY scope")
        .fetch_all(pool)
        .await
        .unwrap()
}

#[sqlx::test(migrations = "./migrations")]
async fn a_facilitator_removes_an_ended_rigs_heartbeats_and_never_a_sale_engines_nor_a_running_rigs(pool: MySqlPool) {
    let redis = TestRedis::new("leftover1").await;
    let people = People::new();
    let _admin = applied(&pool, &redis, &people, &[SaleRole::Facilitator]).await;
    let facilitator = people.connect(SaleRole::Facilitator, &pool, &redis).await.mysql;
    let ended = drills::begin(&pool, &run("ended")).await.unwrap();
    drills::finish(&pool, ended, RunStatus::Passed, &serde_json::json!({})).await.unwrap();
    let running = drills::begin(&pool, &run("running")).await.unwrap();
    beats(&pool, "sale-e1", Home::Sale).await;
    beats(&pool, &format!("drill{ended}-e1"), Home::Rig(ended)).await;
    beats(&pool, &format!("drill{running}-e1"), Home::Rig(running)).await;

    // No blanket DELETE: not a sale engine's row, not every row.
    for sql in ["DELETE FROM engine_heartbeats WHERE instance_id = 'sale-e1'", "DELETE FROM engine_heartbeats"] {
        let refused = sqlx::query(sql).execute(&facilitator).await.expect_err(sql);
        assert_eq!(mysql_number(refused), COMMAND_DENIED, "{sql}");
    }
    // Through the view: a sale engine's and a running rig's rows are not there to delete ...
    let sale_or_running = format!(
        "DELETE FROM ended_rig_heartbeats WHERE home IN ('global', 'rig:{running}') OR instance_id = 'sale-e1'"
    );
    let none = sqlx::query(&sale_or_running).execute(&facilitator).await.unwrap();
    assert_eq!(none.rows_affected(), 0);
    // ... nor can a sale engine's row be moved into an ended rig's home first.
    let moved = format!("UPDATE engine_heartbeats SET home = 'rig:{ended}' WHERE instance_id = 'sale-e1'");
    let refused = sqlx::query(&moved).execute(&facilitator).await.expect_err("a home is fixed");
    assert_eq!(refused.as_database_error().and_then(|d| d.code()).as_deref(), Some("45000"), "{refused}");
    // The ended rig's heartbeat goes, and only it.
    let removed = sqlx::query("DELETE FROM ended_rig_heartbeats").execute(&facilitator).await.unwrap();
    assert_eq!(removed.rows_affected(), 1);
    assert_eq!(heartbeats(&pool).await, vec![format!("drill{running}-e1"), "sale-e1".to_string()]);
    // The runner's own last step, once its run is over, does the same for its run alone.
    drills::finish(&pool, running, RunStatus::Passed, &serde_json::json!({})).await.unwrap();
    assert_eq!(drills::forget_heartbeats(&facilitator, running).await.unwrap(), 1);
    assert_eq!(heartbeats(&pool).await, vec!["sale-e1".to_string()]);
}

#[sqlx::test(migrations = "./migrations")]
async fn a_dead_runs_rig_row_lapses_with_its_lease_when_someone_who_may_operate_looks(pool: MySqlPool) {
    let redis = TestRedis::new("leftover2").await;
    let people = People::new();
    let admin = applied(&pool, &redis, &people, &[SaleRole::Facilitator, SaleRole::Viewer]).await;
    // The sale's own switch: a person put product 1 in DB mode, the global row is NORMAL.
    let person = Changer::person(&admin.settings).unwrap();
    store::set(&pool, &person, Scope::Global, Mode::Normal, "tests: the sale's row").await.unwrap();
    store::set(&pool, &person, Scope::Product(1), Mode::Degraded, "tests: the sale's product").await.unwrap();
    // A drill whose breaker tripped, then whose runner was killed: its heartbeat ages.
    let dead = drills::begin(&pool, &run("redis-down")).await.unwrap();
    sqlx::query("INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit, rig) VALUES (2, 'rig', 5, 5, 1, ?)")
        .bind(dead)
        .execute(&pool)
        .await
        .unwrap();
    let mut r = redis.conn().await;
    let _: () = redis::cmd("SET").arg(redis.keys.stock(2)).arg(5).query_async(&mut r).await.unwrap();
    beats(&pool, &format!("drill{dead}-e1"), Home::Rig(dead)).await;
    store::escalate_breaker(&pool, Home::Rig(dead), &format!("drill{dead}-e1"), "tests: Redis down").await.unwrap();
    let sale_before: Vec<_> = switch_rows(&pool).await.into_iter().filter(|(s, ..)| !s.starts_with("rig:")).collect();

    // While its lease runs, a look by someone who may operate changes nothing.
    let facilitator = acting(&people, SaleRole::Facilitator, Role::Facilitator, &pool, &redis).await;
    assert_eq!(drills::sweep(&facilitator, LEASE).await.unwrap(), Swept::default());
    // Once it ran out, a viewer's look changes nothing either (and shows the run dead) ...
    sqlx::query("UPDATE drill_runs SET heartbeat_at = NOW(3) - INTERVAL 10 SECOND WHERE id = ?")
        .bind(dead)
        .execute(&pool)
        .await
        .unwrap();
    let viewer = acting(&people, SaleRole::Viewer, Role::Viewer, &pool, &redis).await;
    assert_eq!(drills::sweep(&viewer, LEASE).await.unwrap(), Swept::default());
    let shown = drills::list(&viewer.mysql, 5, LEASE).await.unwrap();
    assert_eq!((shown[0].status, shown[0].dead), (RunStatus::Running, true));

    // ... and the facilitator's ends it DEAD, leads its rig's row back and clears the rest.
    let swept = drills::sweep(&facilitator, LEASE).await.unwrap();
    assert_eq!(swept, Swept { dead: vec![dead], rigs_led_back: vec![dead], products_led_back: vec![], heartbeats: 1 });
    let shown = drills::list(&viewer.mysql, 5, LEASE).await.unwrap();
    assert_eq!((shown[0].status, shown[0].dead), (RunStatus::Dead, true));
    let rig_in_force = format!("SELECT COUNT(*) FROM degrade_switch WHERE scope = 'rig:{dead}' AND mode <> 'NORMAL'");
    assert_eq!(support::scalar(&pool, &rig_in_force).await, 0, "the dead rig's row lapsed");
    assert!(heartbeats(&pool).await.is_empty(), "the dead rig's heartbeats are gone");
    let key: Option<i64> = redis::cmd("GET").arg(redis.keys.stock(2)).query_async(&mut r).await.unwrap();
    assert_eq!(key, None, "the dead rig's keys are gone");
    let audited = format!(
        "SELECT COUNT(*) FROM audit_log WHERE (action = 'drill.dead' AND target = 'drill:{dead}') \
         OR (action = 'degrade.switch' AND target = 'rig:{dead}' AND outcome = 'NORMAL')"
    );
    assert_eq!(support::scalar(&pool, &audited).await, 2, "its end and its row's lapse are audited");
    // The sale's own rows are as they were.
    let sale_after: Vec<_> = switch_rows(&pool).await.into_iter().filter(|(s, ..)| !s.starts_with("rig:")).collect();
    assert_eq!(sale_after, sale_before);
    // A second look finds nothing left to clear.
    assert_eq!(drills::sweep(&facilitator, LEASE).await.unwrap(), Swept::default());
}
