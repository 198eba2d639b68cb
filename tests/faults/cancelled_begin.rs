//! A transaction whose caller is dropped between the answers of a begin of several statements
//! (a timeout, a buyer who hung up) leaves no connection in a transaction nobody ends. With
//! sqlx's own `begin_with`, the connection goes back to the pool inside the transaction and
//! every later statement on it is never committed: the `redis-down` drill stalled its three
//! engines for minutes that way (an engine's heartbeats written in a transaction nobody
//! ended, the other connections waiting on its row lock).

use std::time::Duration;

use sqlx::mysql::MySqlPoolOptions;
use sqlx::MySqlPool;

use crate::support;

/// How the engine's DB path begins an order's transaction (`engine::degraded`), with a pause
/// between its statements that the server takes: the caller has the first answer and waits
/// for the last when it is dropped, as a buyer's request is when its buyer hangs up.
const SLOW_BEGIN: &str = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ; DO SLEEP(1.5); START TRANSACTION";
/// The caller's patience: long after the first answer, long before the last.
const PATIENCE: Duration = Duration::from_millis(400);

async fn counter_table(pool: &MySqlPool) {
    sqlx::query("CREATE TABLE counter (id INT PRIMARY KEY, v INT NOT NULL)").execute(pool).await.unwrap();
    sqlx::query("INSERT INTO counter VALUES (1, 0)").execute(pool).await.unwrap();
}

/// After a begin dropped between its answers, one autocommitted update through the same
/// one-connection pool: how many see it committed (read from another connection).
async fn update_after_a_dropped_begin(pool: &MySqlPool, begin_whole: bool) -> i64 {
    counter_table(pool).await;
    let one = MySqlPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(30))
        .connect(&support::mysql_url_of(pool).await)
        .await
        .unwrap();
    let dropped = if begin_whole {
        tokio::time::timeout(PATIENCE, stockguard_core::tx::begin_with(&one, SLOW_BEGIN)).await.map(drop)
    } else {
        tokio::time::timeout(PATIENCE, one.begin_with(SLOW_BEGIN)).await.map(drop)
    };
    assert!(dropped.is_err(), "the caller stopped waiting before the begin was answered");
    // The pool's one connection: once it is back, this runs on it.
    sqlx::query("UPDATE counter SET v = v + 1 WHERE id = 1").execute(&one).await.unwrap();
    let seen: i64 =
        sqlx::query_scalar("SELECT CAST(v AS SIGNED) FROM counter WHERE id = 1").fetch_one(pool).await.unwrap();
    one.close().await;
    seen
}

#[sqlx::test(migrations = false)]
async fn a_begin_run_whole_and_dropped_between_its_answers_leaves_the_next_statement_committed(pool: MySqlPool) {
    assert_eq!(update_after_a_dropped_begin(&pool, true).await, 1, "the update after it was committed");
}

/// The failure the test above guards against, on sqlx's own `begin_with`: if this ever sees
/// the update committed, sqlx's begin became cancel-safe and `stockguard_core::tx` may go.
#[sqlx::test(migrations = false)]
async fn sqlxs_own_begin_dropped_between_its_answers_leaves_the_next_statement_in_a_transaction_nobody_ends(
    pool: MySqlPool,
) {
    assert_eq!(update_after_a_dropped_begin(&pool, false).await, 0, "the update after it is not committed");
}
