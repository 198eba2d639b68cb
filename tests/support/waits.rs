//! Waiting in tests for something another task or connection does: a condition, or
//! statements blocked on a lock.

use std::time::Duration;

use sqlx::MySqlPool;

/// Polls `check` every 20 ms until it holds, failing the test after `timeout`.
pub async fn wait_for(what: &str, timeout: Duration, mut check: impl AsyncFnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + timeout;
    while !check().await {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until `n` statements of this test's database starting with `prefix` are running
/// (blocked on a lock, in these tests). PROCESSLIST, not INNODB_TRX: the latter is a cache
/// refreshed only when nobody read it for 0.1 s.
pub async fn wait_for_running(pool: &MySqlPool, prefix: &str, n: i64) {
    for _ in 0..250 {
        let running: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
             WHERE DB = DATABASE() AND COMMAND IN ('Query', 'Execute') AND INFO LIKE CONCAT(?, '%')",
        )
        .bind(prefix)
        .fetch_one(pool)
        .await
        .unwrap();
        if running >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting until {n} `{prefix}...` run");
}
