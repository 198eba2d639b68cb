//! The ledger abort: no chaos tool aborts on "a unit was oversold"; a drill does, within two
//! sampler ticks of the oversold write, and ends every fault it put in force.

use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::drills::events::{self, Event};
use stockguard_core::drills::RunStatus;
use stockguard_core::profile::EnvironmentKind;
use stockguard_engine::drill::runner::{self, Variant};

use crate::rig::{self, LONG_FAULT};
use crate::support::{self, TestRedis};

/// Writes orders beyond the product's stock straight into the DB, as a bug or a hand edit
/// would; answers their numbers and the DB's time of the write.
async fn oversell_by_hand(pool: &MySqlPool, product: u64) -> (Vec<String>, chrono::NaiveDateTime) {
    let initial: i64 =
        support::scalar(pool, &format!("SELECT initial_stock FROM inventory WHERE product_id = {product}")).await;
    let mut numbers = Vec::new();
    for n in 0..3 {
        let order_no = format!("HAND-{product}-{n}");
        sqlx::query(
            "INSERT INTO orders (order_no, user_id, product_id, buy_count, status, source, pay_deadline) \
             VALUES (?, ?, ?, ?, 'WAIT_PAY', 'DB', NOW(3) + INTERVAL 1 HOUR)",
        )
        .bind(&order_no)
        .bind(900 + n)
        .bind(product)
        .bind(initial)
        .execute(pool)
        .await
        .unwrap();
        numbers.push(order_no);
    }
    let at: chrono::NaiveDateTime = sqlx::query_scalar("SELECT NOW(3)").fetch_one(pool).await.unwrap();
    (numbers, at)
}

#[sqlx::test(migrations = "./migrations")]
async fn a_drill_whose_ledger_goes_oversold_is_aborted_within_two_ticks_and_its_faults_end(pool: MySqlPool) {
    let _slot = rig::one_at_a_time().await;
    let redis = TestRedis::new("abort").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    let (api, proxies) = rig::proxy_service(Duration::from_secs(5)).await;
    let drill = {
        let conns = conns.clone();
        let opts = rig::options(LONG_FAULT, Variant::default(), Some(api));
        tokio::spawn(async move { runner::run(&conns, opts, &|_| {}).await })
    };
    assert!(rig::within(Duration::from_secs(60), || rig::faulted(&proxies)).await.is_some(), "the fault was injected");
    let product: u64 = sqlx::query_scalar("SELECT MAX(product_id) FROM inventory").fetch_one(&pool).await.unwrap();
    let (hand_written, written_at) = oversell_by_hand(&pool, product).await;

    let restored = rig::within(Duration::from_secs(8), || rig::clean(&proxies)).await;
    let outcome = drill.await.unwrap().expect("the runner ends with a verdict");
    assert_eq!(outcome.status, RunStatus::Aborted, "{:?}", outcome.summary.reason);
    assert!(outcome.summary.reason.as_deref().unwrap_or_default().contains("oversell"), "{:?}", outcome.summary.reason);

    let abort_at: chrono::NaiveDateTime =
        sqlx::query_scalar("SELECT at FROM drill_events WHERE run_id = ? AND kind = 'abort'")
            .bind(outcome.run_id)
            .fetch_one(&pool)
            .await
            .unwrap();
    let took = (abort_at - written_at).num_milliseconds();
    assert!(took <= 2_000, "aborted {took} ms after the oversold write: more than two 1 s ticks");
    // The run's row said ABORTED as soon as it was decided, not after the drain and checks.
    let (status, marked_at): (String, chrono::NaiveDateTime) =
        sqlx::query_as("SELECT CAST(status AS CHAR), finished_at FROM drill_runs WHERE id = ?")
            .bind(outcome.run_id)
            .fetch_one(&pool)
            .await
            .unwrap();
    let marked = (marked_at - written_at).num_milliseconds();
    assert_eq!(status, "ABORTED");
    assert!(marked <= 2_000, "drill_runs said ABORTED {marked} ms after the oversold write: more than two ticks");
    let restored = restored.expect("every fault ended");
    assert!(restored <= Duration::from_secs(5), "the faults ended {restored:?} after the write");

    // Through the proxies, Redis and MySQL answer again, and quickly.
    for view in proxies.all().values() {
        let t = std::time::Instant::now();
        let mut stream = tokio::net::TcpStream::connect(&view.listen).await.expect("the proxy is open");
        if view.name.ends_with("redis") {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            stream.write_all(b"PING\r\n").await.unwrap();
            let mut reply = [0u8; 7];
            stream.read_exact(&mut reply).await.unwrap();
            assert_eq!(&reply, b"+PONG\r\n");
            assert!(t.elapsed() < Duration::from_millis(15), "no latency is left on {}", view.name);
        }
    }
    let oversold: Vec<&str> =
        outcome.summary.affected_orders.iter().filter(|o| o.why == "OVERSOLD").map(|o| o.order_no.as_str()).collect();
    for n in &hand_written {
        assert!(oversold.contains(&n.as_str()), "{n} is listed for compensation: {oversold:?}");
    }
    let timeline = events::timeline(&pool, outcome.run_id).await.unwrap();
    assert!(timeline.iter().any(|e| matches!(&e.event, Event::Violation { invariant, .. } if invariant == "oversell")));
}
