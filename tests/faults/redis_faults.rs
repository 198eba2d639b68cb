//! Exactness when Redis loses data or goes back in time (issue 12): a real `redis-server`
//! of the test's own is restarted empty, or a replica that lagged is promoted, and the
//! reading, the rewrite and the guided exit must still tell and set the truth.

use crate::sale;
use crate::support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::connect::Connections;
use stockguard_core::recon::{fork, read_products, DriftStatus, Reading};
use stockguard_core::rewrite::{self, Outcome, RewriteRequest};
use stockguard_core::switch::Home;
use stockguard_engine::engine::reserve::{ReserveOutcome, ReserveRequest};
use support::redis_server::RedisServer;

const P: u64 = 7;

async fn reading(conns: &Connections) -> Reading {
    let mut r = conns.redis.clone();
    read_products(&conns.mysql, &mut r, &conns.keys, &[P]).await.unwrap().remove(0)
}

/// Buyers `users` each ask for one unit through Redis; returns how many were reserved.
async fn sell(conns: &Connections, users: std::ops::Range<u64>) -> usize {
    let reserver = sale::reserver(&conns.mysql).await;
    let mut r = conns.redis.clone();
    let mut reserved = 0;
    for user in users {
        let req = sale::one_unit(user, P, 5);
        match reserver.reserve(&mut r, &conns.keys, &req).await.unwrap() {
            ReserveOutcome::Reserved { .. } => reserved += 1,
            ReserveOutcome::SoldOut | ReserveOutcome::NotReady => {}
            other => panic!("unexpected answer for user {user}: {other:?}"),
        }
    }
    reserved
}

/// The connection manager finds out about a restart on its next command, then reconnects.
async fn reconnected(conns: &Connections) {
    let mut r = conns.redis.clone();
    for _ in 0..100 {
        if redis::cmd("PING").query_async::<String>(&mut r).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no connection to the restarted Redis");
}

async fn failed_orders(pool: &MySqlPool) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM order_failures").fetch_one(pool).await.unwrap()
}

async fn redis_stock(conns: &Connections) -> Option<i64> {
    let mut r = conns.redis.clone();
    redis::cmd("GET").arg(conns.keys.stock(P)).query_async(&mut r).await.unwrap()
}

/// A sale of `stock` units on a master with a replica: five sold and replicated, then the
/// replica stops receiving (it is promoted), the master sells three more, all persisted, and
/// dies. Returns the promoted replica and connections to it: three deductions behind the DB.
async fn failed_over_three_behind(pool: &MySqlPool, tag: &str, stock: i64) -> (RedisServer, Connections) {
    let master = RedisServer::start().await;
    let mut replica = RedisServer::replica_of(&master).await;
    let on_master = support::connections_to(pool, &master.url(), tag).await;
    sale::open_sale(&on_master, P, stock, 5).await;
    assert_eq!(sell(&on_master, 1..6).await, 5);
    sale::persist_all(&on_master, P).await;
    master.wait_replicated(1).await;
    replica.promote().await;
    assert_eq!(sell(&on_master, 6..9).await, 3);
    sale::persist_all(&on_master, P).await;
    drop(master);
    let settings = stockguard_core::profile::ConnectionSettings::from_urls(
        stockguard_core::profile::EnvironmentKind::Sandbox,
        &support::mysql_url_of(pool).await,
        &replica.url(),
        on_master.keys.prefix(),
    );
    (replica, Connections::open(settings).await.unwrap())
}

#[sqlx::test(migrations = "./migrations")]
async fn after_redis_restarts_empty_the_rebuild_sets_what_the_db_says_and_no_buyer_is_failed(pool: MySqlPool) {
    let mut server = RedisServer::start().await;
    let conns = support::connections_to(&pool, &server.url(), "flt1").await;
    sale::open_sale(&conns, P, 10, 5).await;
    assert_eq!(sell(&conns, 1..5).await, 4);
    sale::persist_all(&conns, P).await;
    assert_eq!(sale::db_stock(&pool, P).await, 6);

    server.restart_empty().await;
    reconnected(&conns).await;
    let lost = reading(&conns).await;
    assert_eq!(lost.status, DriftStatus::KeyMissing);
    assert_eq!(lost.expected_redis, 6, "the units sold before the restart are not counted as sold after the cut");

    let rebuilt = rewrite::rewrite(&conns, &RewriteRequest::new(P, "Redis restarted empty")).await.unwrap();
    assert_eq!(rebuilt.outcome, Outcome::Rebuilt);
    assert_eq!(redis_stock(&conns).await, Some(6));
    assert_eq!(reading(&conns).await.status, DriftStatus::Ok);

    // Fourteen more buyers: six get a unit, and every one of them is persisted.
    assert_eq!(sell(&conns, 100..114).await, 6);
    sale::persist_all(&conns, P).await;
    assert_eq!(sale::db_stock(&pool, P).await, 0);
    assert_eq!(failed_orders(&pool).await, 0, "nobody was told ACCEPTED and then FAILED");
    assert_eq!(reading(&conns).await.status, DriftStatus::Ok);
}

#[sqlx::test(migrations = "./migrations")]
async fn a_failover_to_a_replica_that_lagged_is_history_lost_and_the_rewrite_resets_it(pool: MySqlPool) {
    let (_replica, conns) = failed_over_three_behind(&pool, "flt2", 20).await;

    let after = reading(&conns).await;
    assert_eq!(after.redis_stock, Some(15), "the replica's stale stock");
    assert_eq!(after.status, DriftStatus::HistoryLost, "never OK: {after:?}");
    assert!(after.history_lost);
    assert_eq!(after.expected_redis, 12);

    let reset = rewrite::rewrite(&conns, &RewriteRequest::new(P, "failover to a lagging replica")).await.unwrap();
    assert_eq!(reset.outcome, Outcome::Rebuilt);
    assert_eq!(redis_stock(&conns).await, Some(12));
    let now = reading(&conns).await;
    assert_eq!((now.status, now.drift), (DriftStatus::Ok, Some(0)));
    assert_eq!(now.cut_epoch, reset.fence_token, "the reset started a new epoch");

    // The rest of the sale: twelve units for twenty buyers, none failed.
    assert_eq!(sell(&conns, 100..120).await, 12);
    sale::persist_all(&conns, P).await;
    assert_eq!(sale::db_stock(&pool, P).await, 0);
    assert_eq!(failed_orders(&pool).await, 0);
    assert_eq!(reading(&conns).await.status, DriftStatus::Ok);
}

#[sqlx::test(migrations = "./migrations")]
async fn once_the_new_master_outsells_the_lost_numbers_the_lag_shows_as_redis_high(pool: MySqlPool) {
    let (_replica, conns) = failed_over_three_behind(&pool, "flt3", 20).await;
    let epoch = reading(&conns).await.cut_epoch;
    assert!(!fork::forked(&pool, P, epoch).await.unwrap(), "no number is issued twice before the new master sells");

    // Sales go on on the promoted replica, reusing the numbers the lost history issued,
    // until they pass them: at no point is the product reported OK.
    for buyer in 100..106 {
        assert_eq!(sell(&conns, buyer..buyer + 1).await, 1);
        sale::persist_all(&conns, P).await;
        let r = reading(&conns).await;
        assert_ne!(r.status, DriftStatus::Ok, "after buyer {buyer}: {r:?}");
    }
    let r = reading(&conns).await;
    assert_eq!((r.status, r.drift), (DriftStatus::RedisHigh, Some(3)), "the three lost deductions: {r:?}");

    // The reading can no longer tell the history forked; the DB can (two orders of one
    // number), and the rewrite goes by it: a reset to what the DB says, in a new epoch.
    assert!(fork::forked(&pool, P, epoch).await.unwrap(), "the reissued numbers are in the DB twice");
    let preview =
        rewrite::rewrite(&conns, &RewriteRequest { dry_run: true, ..RewriteRequest::new(P, "look") }).await.unwrap();
    let shown = preview.reading.as_ref().unwrap();
    assert_eq!((shown.status, preview.after), (DriftStatus::HistoryLost, Some(20 - 8 - 6)), "{preview:?}");
    let reset = rewrite::rewrite(&conns, &RewriteRequest::new(P, "failover forked the history")).await.unwrap();
    assert_eq!(reset.outcome, Outcome::Rebuilt, "{reset:?}");
    assert_eq!(redis_stock(&conns).await, Some(6));
    let now = reading(&conns).await;
    assert_eq!((now.status, now.drift, now.cut_epoch), (DriftStatus::Ok, Some(0), reset.fence_token));
    assert_eq!(sell(&conns, 200..210).await, 6, "the last six units, and no more");
    sale::persist_all(&conns, P).await;
    assert_eq!((sale::db_stock(&pool, P).await, failed_orders(&pool).await), (0, 0));
}

#[sqlx::test(migrations = "./migrations")]
async fn a_lost_history_is_reset_while_buyers_keep_buying_and_the_second_pass_leaves_it_exact(pool: MySqlPool) {
    let (_replica, conns) = failed_over_three_behind(&pool, "flt5", 20_000).await;
    assert_eq!(reading(&conns).await.status, DriftStatus::HistoryLost);

    // Four buyers at a time on the promoted replica for as long as the rewrite runs, and a
    // consumer persisting their orders as they come: a reset that waited for a moment with
    // nothing reserved would find none (the rewrite's reset did, before: it gave up), and
    // orders reserved after its cut reach the DB before it reads the DB.
    let stop = Arc::new(AtomicBool::new(false));
    let bought = Arc::new(AtomicU64::new(0));
    let mut busy = Vec::new();
    for buyer in 1..=4u64 {
        let (conns, stop, bought) = (conns.clone(), stop.clone(), bought.clone());
        busy.push(tokio::spawn(async move {
            let reserver = sale::reserver(&conns.mysql).await;
            let mut r = conns.redis.clone();
            for user in buyer * 100_000.. {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                match reserver.reserve(&mut r, &conns.keys, &sale::one_unit(user, P, 5)).await.unwrap() {
                    ReserveOutcome::Reserved { .. } => bought.fetch_add(1, Ordering::Relaxed),
                    other => panic!("user {user}: {other:?}"),
                };
            }
        }));
    }
    busy.push({
        let (conns, stop) = (conns.clone(), stop.clone());
        tokio::spawn(async move {
            use stockguard_engine::engine::consumer;
            let cfg = sale::consumer_config("flt5");
            let mut r = conns.redis.clone();
            consumer::ensure_group(&mut r, &conns.keys, P).await.unwrap();
            while !stop.load(Ordering::Relaxed) {
                consumer::run_once(&conns.mysql, &mut r, &conns.keys, &[P], &cfg).await.unwrap();
            }
        })
    });
    support::waits::wait_for("the buyers are buying", Duration::from_secs(30), async || {
        bought.load(Ordering::Relaxed) >= 20
    })
    .await;
    let before = bought.load(Ordering::Relaxed);
    let reset = rewrite::rewrite(&conns, &RewriteRequest::new(P, "failover to a lagging replica")).await.unwrap();
    let during = bought.load(Ordering::Relaxed) - before;
    stop.store(true, Ordering::Relaxed);
    for task in busy {
        task.await.unwrap();
    }
    let bought = bought.load(Ordering::Relaxed);
    assert_eq!(reset.outcome, Outcome::Rebuilt, "{reset:?}");
    assert!(during > 0, "the buyers bought while the rewrite ran");
    assert_eq!(reset.drift_after, Some(0), "the second pass, in the new epoch, left nothing: {reset:?}");

    sale::persist_all(&conns, P).await;
    let end = reading(&conns).await;
    assert_eq!((end.status, end.drift), (DriftStatus::Ok, Some(0)), "{end:?}");
    assert_eq!(sale::db_stock(&pool, P).await, 20_000 - 8 - bought as i64);
    assert_eq!(failed_orders(&pool).await, 0);
    eprintln!("reset under live sales: {during} units sold while it ran, delta {}", reset.delta);
}

#[sqlx::test(migrations = "./migrations")]
async fn after_redis_restarts_empty_in_db_mode_the_guided_exit_sets_what_the_db_says(pool: MySqlPool) {
    use stockguard_core::switch::{self, store, Changer, ExitOptions, Mode, Scope};
    use stockguard_engine::engine::degraded;

    let mut server = RedisServer::start().await;
    let conns = support::connections_to(&pool, &server.url(), "flt4").await;
    sale::open_sale(&conns, P, 10, 5).await;
    assert_eq!(sell(&conns, 1..4).await, 3);
    sale::persist_all(&conns, P).await;

    // Redis trouble: DB mode, two sales straight through the DB, and Redis comes back empty.
    let changer = Changer::person(&conns.settings).unwrap();
    store::set(&pool, &changer, Scope::Global, Mode::Degraded, "Redis is failing").await.unwrap();
    let numbers = sale::reserver(&pool).await;
    for user in 50..52 {
        let req = ReserveRequest {
            user_id: user,
            product_id: P,
            qty: 1,
            idempotency_key: format!("k{user}"),
            per_user_limit: 5,
        };
        let placed =
            degraded::place_order(&pool, Home::Sale, &req, &numbers.next_order_no(P), Duration::from_secs(600))
                .await
                .unwrap();
        assert!(matches!(placed, ReserveOutcome::Reserved { .. }), "{placed:?}");
    }
    server.restart_empty().await;
    reconnected(&conns).await;

    switch::guided_exit(&conns, &ExitOptions::new(Scope::Global, "Redis is back"), &|_| {}).await.unwrap();
    assert_eq!(redis_stock(&conns).await, Some(5), "10 - 3 sold through Redis - 2 through the DB");

    // Back on Redis: eight buyers for five units, none failed afterwards.
    assert_eq!(sell(&conns, 100..108).await, 5);
    sale::persist_all(&conns, P).await;
    assert_eq!(sale::db_stock(&pool, P).await, 0);
    assert_eq!(failed_orders(&pool).await, 0);
    assert_eq!(reading(&conns).await.status, DriftStatus::Ok);
}
