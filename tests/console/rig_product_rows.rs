//! A person's row on a drill rig's product lapses with the run (issue 51, item 6): a run whose
//! runner died cannot lead it back itself, so the sweep of the next look does, through the
//! switch and audited, with the facilitator's own account; a row of the sale's own product, and
//! one of a running drill's product, are left as they are.

use std::time::Duration;

use crate::roles::{applied, People};
use crate::support::{self, TestRedis};

use sqlx::MySqlPool;
use stockguard_core::drills::{self, NewRun};
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::roles::SaleRole;
use stockguard_core::switch::{store, Changer, Mode, Scope};

fn run(scenario: &str) -> NewRun<'_> {
    NewRun { scenario, runner: "host:4242", plan_hash: "ab12", seed: 7, parameters: serde_json::json!({}) }
}

async fn on_sale(pool: &MySqlPool, product: u64, rig: Option<u64>) {
    sqlx::query(
        "INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit, rig) VALUES (?, 'p', 5, 5, 1, ?)",
    )
    .bind(product)
    .bind(rig)
    .execute(pool)
    .await
    .unwrap();
}

async fn mode_of(pool: &MySqlPool, product: u64) -> String {
    sqlx::query_scalar("SELECT CAST(mode AS CHAR) FROM degrade_switch WHERE scope = ?")
        .bind(Scope::Product(product).key())
        .fetch_one(pool)
        .await
        .unwrap()
}

#[sqlx::test(migrations = "./migrations")]
async fn a_dead_runs_product_row_lapses_with_its_sweep_and_the_sales_and_a_running_rigs_stay(pool: MySqlPool) {
    let redis = TestRedis::new("rigrows").await;
    let people = People::new();
    let _admin = applied(&pool, &redis, &people, &[SaleRole::Facilitator]).await;
    let facilitator = people.connect(SaleRole::Facilitator, &pool, &redis).await;
    // A run whose runner stopped beating, one still running, and the sale's own product.
    let dead = drills::begin(&pool, &run("dead")).await.unwrap();
    sqlx::query("UPDATE drill_runs SET heartbeat_at = NOW(3) - INTERVAL 1 HOUR WHERE id = ?")
        .bind(dead)
        .execute(&pool)
        .await
        .unwrap();
    let running = drills::begin(&pool, &run("running")).await.unwrap();
    let (sale, dead_rig, running_rig) = (1, 2, 3);
    on_sale(&pool, sale, None).await;
    on_sale(&pool, dead_rig, Some(dead)).await;
    on_sale(&pool, running_rig, Some(running)).await;
    // A person puts each product in DB mode, as `degrade on --product` does.
    let person =
        Changer::person(&support::connections(&pool, &redis, EnvironmentKind::Sandbox).await.settings).unwrap();
    for p in [sale, dead_rig, running_rig] {
        store::set(&pool, &person, Scope::Product(p), Mode::Degraded, "watching it").await.unwrap();
    }

    let swept = drills::sweep(&facilitator, Duration::from_secs(60)).await.unwrap();
    assert_eq!((swept.dead, swept.products_led_back), (vec![dead], vec![dead_rig]));
    assert_eq!(mode_of(&pool, dead_rig).await, "NORMAL", "the dead run's product's row lapsed");
    assert_eq!(mode_of(&pool, sale).await, "DEGRADED", "the sale's own row stays");
    assert_eq!(mode_of(&pool, running_rig).await, "DEGRADED", "a running drill's stays");
    let lapse = format!(
        "SELECT COUNT(*) FROM audit_log WHERE action = 'degrade.switch' AND target = 'product:{dead_rig}' \
         AND outcome = 'NORMAL' AND actor = '{}'",
        people.user(SaleRole::Facilitator)
    );
    assert_eq!(support::scalar(&pool, &lapse).await, 1, "through the switch, audited, by who swept");
}
