//! Transactions begun whole, whatever happens to the caller.
//!
//! A transaction that sets its own isolation level begins with two statements in one round
//! trip (`SET TRANSACTION ...; START TRANSACTION`), and sqlx counts it only once the last
//! answer is read. A caller dropped between the first answer and the last (a timeout around
//! the work, an HTTP handler whose buyer hung up) leaves the server in a transaction sqlx
//! does not know of: the connection goes back to the pool as it is (its release only drains
//! the answers still due), and every statement run on it afterwards (an engine's heartbeat, a
//! conditional deduction) runs inside that transaction and is never committed. Its row locks
//! are held for as long as the connection lives and every other connection that touches
//! those rows waits. The `redis-down` drill found it: with Redis cut under load, buyers
//! timing out mid-begin on the DB path left an engine's connection writing its heartbeats in
//! a transaction nobody ended, and the rig's three engines stalled for minutes (heartbeats
//! unheard, accepted orders never persisted, the guided exit never resumed).
//!
//! [`begin_with`] runs the pool's `begin_with` as a task of its own: a caller dropped
//! meanwhile drops only its wait, the task finishes beginning, and the transaction it hands to
//! nobody is dropped, which rolls it back as sqlx does for any transaction dropped unfinished.
//! Everything after the begin is sqlx's own business and safe: a transaction dropped
//! mid-statement is rolled back before its connection is used again.

use std::future::Future;

use sqlx::{MySql, MySqlPool, Transaction};

/// `statement` (one or more statements ending in `START TRANSACTION`) on a connection of
/// `pool`, run to its end even when the caller stops waiting.
pub async fn begin_with(pool: &MySqlPool, statement: &'static str) -> Result<Transaction<'static, MySql>, sqlx::Error> {
    let pool = pool.clone();
    whole(async move { pool.begin_with(statement).await }).await
}

/// Runs `work` to its end on a task of its own; the caller may stop waiting, the work does not
/// stop. A panic in it is the caller's panic.
async fn whole<T: Send + 'static>(
    work: impl Future<Output = Result<T, sqlx::Error>> + Send + 'static,
) -> Result<T, sqlx::Error> {
    match tokio::spawn(work).await {
        Ok(out) => out,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        // Only a runtime shutting down cancels the task: no transaction was handed out.
        Err(e) => Err(sqlx::Error::Io(std::io::Error::other(format!("beginning a transaction: {e}")))),
    }
}
