//! A rig takes product ids no key uses, and leaves no switch row of its products in force
//! (issue 51, item 6's last two bullets). The rig took the next id above the database's
//! products and overwrote, then deleted, the Redis keys already there under it (another sale's
//! on the same prefix, an old run's); and a person's `degrade on --product` of a rig product
//! stayed DEGRADED after the run. Here the sale's own engine serves beside the drill.

use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::drills::RunStatus;
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::switch::{store, Changer, Mode, Scope};
use stockguard_engine::drill::runner::{self, Variant};
use stockguard_engine::engine::state::{EngineConfig, EngineState};

use crate::rig;
use crate::sale;
use crate::support::{self, TestRedis};

/// The sale's one product: the rig's ids would start right above it.
const SALE_PRODUCT: u64 = 1;
/// The ids above it, whose keys are someone else's.
const KEYS_IN_USE: [u64; 2] = [2, 3];

#[sqlx::test(migrations = "./migrations")]
async fn a_rig_takes_ids_no_key_uses_and_a_persons_row_on_its_product_lapses_with_the_run(pool: MySqlPool) {
    let _slot = rig::one_at_a_time().await;
    let redis = TestRedis::new("rigids").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, SALE_PRODUCT, 1_000, 1_000).await;
    let engine = EngineState::new(
        conns.mysql.clone(),
        conns.redis.clone(),
        conns.keys.clone(),
        EngineConfig { instance_id: "sale-engine".into(), per_user_rate: 0, ..EngineConfig::default() },
    );
    let (_url, stop_engine, served) = sale::spawn_engine(engine.clone()).await;
    // Keys under the next two ids that are no product of this database's: a stock key and an
    // idempotency hash another sale on the same Redis and prefix sells with.
    let mut r = conns.redis.clone();
    for p in KEYS_IN_USE {
        let _: () = redis::cmd("SET").arg(conns.keys.stock(p)).arg(40 + p).query_async(&mut r).await.unwrap();
        let idem = conns.keys.idempotency(p);
        let _: () = redis::cmd("HSET").arg(&idem).arg("7:k").arg("their-order").query_async(&mut r).await.unwrap();
    }

    // A person puts the rig's product in DB mode while the drill runs, as `degrade on
    // --product` does.
    let person = Changer::person(&conns.settings).unwrap();
    let degrade_rig_product = {
        let pool = pool.clone();
        tokio::spawn(async move {
            let rig_product =
                "SELECT CAST(COALESCE(MAX(product_id), 0) AS SIGNED) FROM inventory WHERE rig IS NOT NULL";
            // Polled here (a spawned task: `wait_for`'s closure is not `Send`).
            let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
            let p = loop {
                match support::scalar(&pool, rig_product).await {
                    0 if tokio::time::Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(20)).await,
                    0 => panic!("the rig's product was not put on sale within 60 s"),
                    p => break p as u64,
                }
            };
            store::set(&pool, &person, Scope::Product(p), Mode::Degraded, "watching one product").await.unwrap()
        })
    };
    let opts = rig::options(rig::REDIS_CUT, Variant { short: Some(0.75), ..Variant::default() }, None);
    let outcome = runner::run(&conns, opts, &|_| {}).await.expect("the drill runs to its end");
    let degraded = degrade_rig_product.await.unwrap();
    let _ = stop_engine.send(());
    served.await.unwrap();
    assert_ne!(outcome.status, RunStatus::Running);

    // The rig's product took an id no key used, and the keys that were there are as they were.
    let rig_products: Vec<u64> = sqlx::query_scalar("SELECT product_id FROM inventory WHERE rig = ?")
        .bind(outcome.run_id)
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(rig_products, [KEYS_IN_USE[1] + 1], "the first id above the database's and the keys in use");
    for p in KEYS_IN_USE {
        let stock: Option<u64> = redis::cmd("GET").arg(conns.keys.stock(p)).query_async(&mut r).await.unwrap();
        let order: Option<String> =
            redis::cmd("HGET").arg(conns.keys.idempotency(p)).arg("7:k").query_async(&mut r).await.unwrap();
        assert_eq!((stock, order.as_deref()), (Some(40 + p), Some("their-order")), "product {p}'s keys");
    }

    // The person's row on the rig's product lapsed with the run, through the switch, audited.
    let Scope::Product(p) = degraded.scope else { panic!("{degraded:?}") };
    assert_eq!(p, rig_products[0]);
    let finished_before: i64 = sqlx::query_scalar(
        "SELECT CAST(TIMESTAMPDIFF(MICROSECOND, ?, finished_at) AS SIGNED) FROM drill_runs WHERE id = ?",
    )
    .bind(degraded.changed_at)
    .bind(outcome.run_id)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert!(finished_before > 0, "the row was put on while the run ran");
    let row: (String, u64) = sqlx::query_as("SELECT CAST(mode AS CHAR), revision FROM degrade_switch WHERE scope = ?")
        .bind(degraded.scope.key())
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(row.0, "NORMAL", "the rig product's row after the run");
    assert!(row.1 > degraded.revision, "led back by a later change");
    let audited = format!(
        "SELECT COUNT(*) FROM audit_log WHERE action = 'degrade.switch' AND target = 'product:{p}' \
         AND outcome = 'NORMAL' AND JSON_EXTRACT(details, '$.revision') = {}",
        row.1
    );
    assert_eq!(support::scalar(&pool, &audited).await, 1, "the lapse is audited");
    assert_eq!(support::scalar(&pool, "SELECT COUNT(*) FROM degrade_switch WHERE mode <> 'NORMAL'").await, 0);
    // The sale's engine never left Redis for any of it.
    assert_eq!(engine.mode_for(SALE_PRODUCT), Mode::Normal);
}
