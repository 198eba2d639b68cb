//! The mark a lost history leaves for other engines (`sg:{P}:lost`, issue 54) is a courtesy:
//! an engine whose Redis account may not write it still keeps its own verdict. Before, the
//! failed `SET` failed the whole check, and the product read as unknown (checked again every
//! 250 ms) instead of lost.

use crate::sale;
use crate::support;

use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_engine::engine::history::Histories;
use support::redis_server::RedisServer;

const P: u64 = 31;

#[sqlx::test(migrations = "./migrations")]
async fn an_engine_that_may_not_mark_a_lost_history_still_finds_it_lost(pool: MySqlPool) {
    let server = RedisServer::start().await;
    let conns = support::connections_to(&pool, &server.url(), "mark").await;
    sale::open_sale(&conns, P, 10, 1).await;
    // The DB holds reservation 5 of epoch 2; Redis, failed over, has issued only 3 of it.
    sqlx::query(
        "INSERT INTO orders (order_no, user_id, product_id, buy_count, reserve_seq, reserve_epoch, pay_deadline) \
         VALUES ('mark-5', 1, ?, 1, 5, 2, NOW(3) + INTERVAL 10 MINUTE)",
    )
    .bind(P)
    .execute(&pool)
    .await
    .unwrap();
    let mut admin = server.conn().await;
    let _: () = redis::cmd("MSET")
        .arg(conns.keys.seq(P))
        .arg(3)
        .arg(conns.keys.epoch(P))
        .arg(2)
        .query_async(&mut admin)
        .await
        .unwrap();
    // An engine account that reads and scripts everything but may not SET.
    let _: () = redis::cmd("ACL")
        .arg(&["SETUSER", "nomark", "on", ">nomark-pw", "~*", "+@all", "-set"])
        .query_async(&mut admin)
        .await
        .unwrap();
    let url = server.url().replacen("redis://", "redis://nomark:nomark-pw@", 1);
    let mut engine_conn = redis::Client::open(url).unwrap().get_multiplexed_async_connection().await.unwrap();

    let histories = Histories::default();
    let whole = histories.whole(&pool, &mut engine_conn, &conns.keys, P, 0, Duration::from_secs(5)).await;

    assert!(!whole, "Redis lacks a reservation the DB holds");
    assert_eq!(histories.lost(), vec![(P, 2)], "found lost in epoch 2, not merely unknown");
    let marked: Option<String> = redis::cmd("GET").arg(conns.keys.lost(P)).query_async(&mut admin).await.unwrap();
    assert_eq!(marked, None, "the account could not leave the mark");
}
