//! Messages a RabbitMQ consumer holds unacknowledged (issue 47, finding 1). A consumer with no
//! prefetch limit takes the whole backlog, so the queue shows 0 ready while every accepted order
//! waits in its hands, in Redis and in no row. Stuck behind a row lock, 3 such orders used to
//! read as a settled `REDIS_LOW -3`, the alert was confirmed, a repair added 3 and the sale then
//! oversold. Here they are `UNSETTLED` (seen through the management API, or unseen without it),
//! never a drift and never repaired; a real drift is still found, and repaired only as reviewed.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::adapter::alerts::confirm_settled;
use stockguard_core::adapter::reading;
use stockguard_core::adapter::repair::{self, DeltaRequest};
use stockguard_core::adapter::{AdapterError, AdapterReading, SaleLinks};
use stockguard_core::recon::DriftStatus::*;
use stockguard_core::recon::{DriftTracker, Reading};
use stockguard_core::ProductId;

use crate::readings::{audit_rows, file, read, settings_for, settled, statuses, SETTLE};
use crate::sales::fastapi_rabbit::FastapiRabbitSale;
use crate::sales::{redis_conn, Traffic};
use crate::support::waits::wait_for;

/// The plain readings, as the drift-confirmation rule takes them.
fn plain(readings: &[AdapterReading]) -> Vec<Reading> {
    readings.iter().map(|r| r.reading.clone()).collect()
}

/// A drift verdict: Redis high or low, by a settled reading.
fn is_drift_verdict(r: &Reading) -> bool {
    r.settled && matches!(r.status, RedisLow | RedisHigh)
}

/// The refusal's text, when the error is a refusal.
fn refusal(err: &AdapterError) -> Option<&str> {
    match err {
        AdapterError::Refused(text) => Some(text),
        _ => None,
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn messages_a_consumer_holds_behind_a_row_lock_are_unsettled_never_redis_low_and_no_repair_adds_them(
    state: MySqlPool,
) {
    let sale = Arc::new(FastapiRabbitSale::start(&[(7, 10)]).await);
    let file = file(&sale.adapter_toml());
    let redis = redis_conn().await;
    let db = Some(&sale.db.pool);
    let none = HashMap::new();
    assert_eq!(statuses(&settled(&file, db, &redis, &none).await), [(7, Ok, Some(0))]);

    let lock = sale.lock_goods(7).await;
    assert_eq!(Traffic::buyers(3).on(&[7]).run(&sale).await.accepted, 3);
    wait_for("the consumer takes the three messages", SETTLE, async || sale.queue_depth().await == 0).await;
    assert_eq!(
        (sale.orders(7).await, sale.acknowledged(), sale.redis_stock(7).await, sale.db_stock(7).await),
        (0, 0, Some(7), 10),
        "three orders in the consumer's hands: in Redis, in no row, none ready in the queue"
    );

    // The first reading may describe statistics from before the consumer took them: read until
    // they show the three held, then four in a row; never a drift verdict on the way.
    let mut tracker = DriftTracker::default();
    let mut confirmed = Vec::new();
    let mut in_a_row = 0;
    for _ in 0..6 {
        let readings = read(&file, db, &redis, &none).await;
        let r = &readings[0];
        assert!(!is_drift_verdict(&r.reading), "a drift verdict while the consumer holds three orders: {r:?}");
        confirmed.extend(confirm_settled(&mut tracker, &plain(&readings)));
        if r.unsettled == Some(reading::Unsettled::Held { messages: 3 }) {
            assert_eq!((r.reading.status, r.reading.drift, r.reading.in_flight), (Unsettled, None, 3));
            in_a_row += 1;
        } else {
            assert_eq!(in_a_row, 0, "a reading after the held ones saw something else: {r:?}");
        }
        if in_a_row == 4 {
            break;
        }
    }
    assert_eq!(in_a_row, 4, "four readings in a row see the three held messages");
    assert!(confirmed.is_empty(), "the confirmation rule confirms nothing: {confirmed:?}");

    let settings = settings_for(&state).await;
    let links = SaleLinks { db, redis: Some(&redis) };
    let err =
        repair::repair(&file, &links, Some(&state), &settings, &DeltaRequest::new(7, "3 orders look lost", false))
            .await
            .unwrap_err();
    assert!(
        refusal(&err).is_some_and(|m| m.contains("UNSETTLED") && m.contains("consumers hold 3 messages")),
        "refused, the held messages said: {err}"
    );
    assert_eq!(sale.redis_stock(7).await, Some(7), "no unit was added");
    assert_eq!(audit_rows(&state, "adapter_rewrite").await, 0);

    // Once the lock clears the held orders become rows: no drift was ever there.
    lock.release().await;
    wait_for("the consumer writes the three orders", SETTLE, async || sale.orders(7).await == 3).await;
    assert_eq!(statuses(&settled(&file, db, &redis, &none).await), [(7, Ok, Some(0))]);
    assert_eq!((sale.redis_stock(7).await, sale.db_stock(7).await, sale.failed_orders()), (Some(7), 7, 0));
    sale.cleanup().await;
}

/// How long a sale stays quiet before its next orders, in the tests of a quiet spell: long
/// enough for RabbitMQ to stop refreshing an idle queue's figures (a scenario, not a wait).
const QUIET: Duration = Duration::from_secs(5);

#[sqlx::test(migrations = "./migrations")]
async fn after_a_quiet_spell_held_messages_are_no_drift_from_the_first_reading_and_the_first_repair_is_refused(
    state: MySqlPool,
) {
    let sale = Arc::new(FastapiRabbitSale::start(&[(7, 10)]).await);
    let file = file(&sale.adapter_toml());
    let redis = redis_conn().await;
    let db = Some(&sale.db.pool);
    let none = HashMap::new();
    let settings = settings_for(&state).await;
    let links = SaleLinks { db, redis: Some(&redis) };
    assert_eq!(statuses(&settled(&file, db, &redis, &none).await), [(7, Ok, Some(0))]);
    assert_eq!(Traffic::users(1..=2).on(&[7]).run(&sale).await.accepted, 2);
    wait_for("the consumer writes the two orders", SETTLE, async || sale.acknowledged() == 2).await;

    // Quiet, then three orders the consumer is stuck on, and at once a repair of what they
    // look like (Redis 3 below the DB): it must not add them.
    tokio::time::sleep(QUIET).await;
    let lock = sale.lock_goods(7).await;
    assert_eq!(Traffic::users(3..=5).on(&[7]).run(&sale).await.accepted, 3);
    wait_for("the consumer takes the three messages", SETTLE, async || sale.queue_depth().await == 0).await;
    let repaired =
        repair::repair(&file, &links, Some(&state), &settings, &DeltaRequest::new(7, "3 orders look lost", false))
            .await;
    assert!(
        repaired.as_ref().is_err_and(|e| refusal(e).is_some_and(|m| m.contains("UNSETTLED"))),
        "the first repair after the orders is refused: {repaired:?}"
    );
    assert_eq!(sale.redis_stock(7).await, Some(5), "no unit was added");
    lock.release().await;
    wait_for("the consumer writes the three orders", SETTLE, async || sale.acknowledged() == 5).await;

    // Quiet again, three more stuck orders: the first reading is no drift either.
    tokio::time::sleep(QUIET).await;
    let lock = sale.lock_goods(7).await;
    assert_eq!(Traffic::users(6..=8).on(&[7]).run(&sale).await.accepted, 3);
    wait_for("the consumer takes the three messages", SETTLE, async || sale.queue_depth().await == 0).await;
    let first = read(&file, db, &redis, &none).await;
    assert!(!is_drift_verdict(&first[0].reading), "the first reading after the orders is no drift: {:?}", first[0]);
    lock.release().await;
    wait_for("the consumer writes the eight orders", SETTLE, async || sale.orders(7).await == 8).await;
    assert_eq!(statuses(&settled(&file, db, &redis, &none).await), [(7, Ok, Some(0))]);
    assert_eq!(audit_rows(&state, "adapter_rewrite").await, 0);
    sale.cleanup().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn without_the_management_api_held_messages_make_a_drift_unsettled_and_no_repair_adds_units(state: MySqlPool) {
    let sale = Arc::new(FastapiRabbitSale::start(&[(7, 10)]).await);
    let file = file(&sale.adapter_toml_without_management());
    let redis = redis_conn().await;
    let db = Some(&sale.db.pool);
    let none = HashMap::new();
    assert_eq!(
        statuses(&settled(&file, db, &redis, &none).await),
        [(7, Ok, Some(0))],
        "figures that agree read OK, consumer or not"
    );

    let lock = sale.lock_goods(7).await;
    assert_eq!(Traffic::buyers(3).on(&[7]).run(&sale).await.accepted, 3);
    wait_for("the consumer takes the three messages", SETTLE, async || sale.queue_depth().await == 0).await;
    assert_eq!(sale.orders(7).await, 0);
    let readings = read(&file, db, &redis, &none).await;
    assert_eq!(statuses(&readings), [(7, Unsettled, None)]);
    assert_eq!(readings[0].unsettled, Some(reading::Unsettled::HeldUnseen { consumers: 1 }));

    let settings = settings_for(&state).await;
    let links = SaleLinks { db, redis: Some(&redis) };
    let err =
        repair::repair(&file, &links, Some(&state), &settings, &DeltaRequest::new(7, "3 orders look lost", false))
            .await
            .unwrap_err();
    assert!(
        refusal(&err).is_some_and(|m| m.contains("UNSETTLED") && m.contains("management_url")),
        "refused, naming what would show the held messages: {err}"
    );
    assert_eq!(sale.redis_stock(7).await, Some(7), "no unit was added");
    assert_eq!(audit_rows(&state, "adapter_rewrite").await, 0);

    lock.release().await;
    wait_for("the consumer writes the three orders", SETTLE, async || sale.orders(7).await == 3).await;
    assert_eq!(statuses(&settled(&file, db, &redis, &none).await), [(7, Ok, Some(0))]);

    // The price of not naming the API: a real lost unit cannot be told from a held message.
    sale.lose_one_after_redis(7).await;
    let readings = read(&file, db, &redis, &none).await;
    assert_eq!(statuses(&readings), [(7, Unsettled, None)]);
    assert_eq!(readings[0].unsettled, Some(reading::Unsettled::HeldUnseen { consumers: 1 }));
    assert_eq!(sale.failed_orders(), 0);
    sale.cleanup().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn an_order_lost_after_redis_is_a_settled_redis_low_within_two_readings_and_is_repaired_only_as_reviewed(
    state: MySqlPool,
) {
    let sale = Arc::new(FastapiRabbitSale::start(&[(7, 10)]).await);
    let file = file(&sale.adapter_toml());
    let redis = redis_conn().await;
    let db = Some(&sale.db.pool);
    let none = HashMap::new();
    assert_eq!(Traffic::buyers(2).on(&[7]).run(&sale).await.accepted, 2);
    wait_for("the consumer writes both orders", SETTLE, async || sale.orders(7).await == 2).await;

    sale.lose_one_after_redis(7).await;
    let lost = [(7, RedisLow, Some(-1))];
    let first = read(&file, db, &redis, &none).await;
    if statuses(&first) != lost {
        // The statistics may still describe the two orders in the consumer's hands.
        assert_eq!(statuses(&first), [(7, Unsettled, None)], "no other verdict on the way: {first:?}");
        assert_eq!(statuses(&read(&file, db, &redis, &none).await), lost, "found by the second reading");
    }

    let settings = settings_for(&state).await;
    let links = SaleLinks { db, redis: Some(&redis) };
    let dry = repair::repair(&file, &links, Some(&state), &settings, &DeltaRequest::new(7, "", true))
        .await
        .expect("a dry run reads");
    assert_eq!((dry.drift, dry.delta, dry.dry_run), (-1, 1, true));

    let stale = DeltaRequest::new(7, "order lost after Redis", false).expecting(-5);
    let err = repair::repair(&file, &links, Some(&state), &settings, &stale).await.unwrap_err();
    assert!(refusal(&err).is_some_and(|m| m.contains("not the -5")), "refused, the drift now said: {err}");
    assert_eq!(sale.redis_stock(7).await, Some(7), "nothing was written");
    assert_eq!(audit_rows(&state, "adapter_rewrite").await, 0);

    let reviewed = DeltaRequest::new(7, "order lost after Redis", false).expecting(dry.drift);
    let done = repair::repair(&file, &links, Some(&state), &settings, &reviewed)
        .await
        .expect("the reviewed drift is repaired");
    assert_eq!((done.delta, done.redis_after), (1, Some(8)));
    assert_eq!(sale.redis_stock(7).await, Some(8), "Redis read back");
    assert_eq!(audit_rows(&state, "adapter_rewrite").await, 1);
    assert_eq!(statuses(&settled(&file, db, &redis, &none).await), [(7, Ok, Some(0))]);
    sale.cleanup().await;
}

/// Buyers that keep coming while a test reads: a wave of `WAVE` new users every `PACE` over
/// the given products (the shape of the load, not a wait), until stopped.
struct LiveBuyers {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<i64>,
}

const WAVE: i64 = 1;
const PACE: Duration = Duration::from_millis(200);

impl LiveBuyers {
    fn start(sale: &Arc<FastapiRabbitSale>, products: &[i64]) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let (sale, products, stopped) = (Arc::clone(sale), products.to_vec(), Arc::clone(&stop));
        let task = tokio::spawn(async move {
            let mut pace = tokio::time::interval(PACE);
            pace.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let (mut accepted, mut next_user) = (0, 1);
            while !stopped.load(Ordering::SeqCst) {
                pace.tick().await;
                let tally = Traffic::users(next_user..=next_user + WAVE - 1).on(&products).run(&sale).await;
                assert!(tally.failed.is_empty(), "the order path failed: {:?}", tally.failed);
                accepted += tally.accepted;
                next_user += WAVE;
            }
            accepted
        });
        Self { stop, task }
    }

    /// Stops the buyers; the orders they were answered for.
    async fn stop(self) -> i64 {
        self.stop.store(true, Ordering::SeqCst);
        self.task.await.expect("the buyers ran")
    }
}

#[tokio::test]
async fn under_live_buyers_and_a_row_lock_no_product_reading_is_a_settled_drift() {
    // Buyers keep coming for products 1 to 50; 51 to 100 are bought only in a burst.
    let products: Vec<i64> = (1..=100).collect();
    let stock: Vec<(i64, i64)> = products.iter().map(|&p| (p, 200)).collect();
    let sale = Arc::new(FastapiRabbitSale::start(&stock).await);
    let file = file(&sale.adapter_toml());
    let redis = redis_conn().await;
    let db = Some(&sale.db.pool);
    // The initial stocks, so the ledger is judged too (a DB-side verdict needs no settling).
    let baselines: HashMap<ProductId, i64> = stock.iter().map(|&(p, s)| ((p as u64).into(), s)).collect();
    let buyers = LiveBuyers::start(&sale, &products[..50]);

    // Eight readings under the buyers: a burst of 300 over every product during the second;
    // product 1's row locked over the fourth to the sixth, with an order of product 1 that the
    // consumer is stuck on (and every message after it held).
    let (mut taken, mut extra) = (0, 0);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut lock = None;
    for n in 0..8 {
        let burst = (n == 1).then(|| Traffic::users(1_000_000..=1_000_299).on(&products).spawn(&sale));
        if n == 3 {
            lock = Some(sale.lock_goods(1).await);
            extra += Traffic::users(2_000_000..=2_000_000).on(&[1]).run(&sale).await.accepted;
        }
        let readings = read(&file, db, &redis, &baselines).await;
        for r in &readings {
            assert!(matches!(r.reading.status, Ok | Unsettled), "a verdict the sale's truth contradicts: {r:?}");
            assert!(!is_drift_verdict(&r.reading));
            if n > 3 && lock.is_some() {
                assert!(
                    matches!(r.unsettled, Some(reading::Unsettled::Held { messages }) if messages >= 1),
                    "the consumer is stuck behind the lock: every product unsettled by what it holds: {r:?}"
                );
            }
            *seen.entry(kind(r)).or_default() += 1;
        }
        taken += readings.len();
        if let Some(burst) = burst {
            let tally = burst.await.expect("the burst ran");
            assert!(tally.failed.is_empty(), "the order path failed: {:?}", tally.failed);
            extra += tally.accepted;
        }
        if n == 5 {
            lock.take().expect("the lock was taken").release().await;
        }
    }
    let accepted = buyers.stop().await + extra;
    println!("product readings under live buyers: {taken} {seen:?}; orders accepted: {accepted}");
    assert!(taken >= 500, "{taken} product readings");

    wait_for("the consumer writes every accepted order", SETTLE, async || {
        sale.acknowledged() == accepted && sale.queue_depth().await == 0
    })
    .await;
    assert_eq!(sale.failed_orders(), 0, "the consumer lost no order: the sale's truth has no drift");
    let end = settled(&file, db, &redis, &baselines).await;
    assert!(end.iter().all(|r| (r.reading.status, r.reading.drift) == (Ok, Some(0))), "{:?}", statuses(&end));
    sale.cleanup().await;
}

/// A reading's kind, for the count printed: its status, and why when it is unsettled (the
/// reason's name in the JSON).
fn kind(r: &AdapterReading) -> String {
    match &r.unsettled {
        Some(why) => format!("{} {}", r.reading.status, serde_json::to_value(why).expect("a reason is JSON")["why"]),
        None => r.reading.status.to_string(),
    }
}
