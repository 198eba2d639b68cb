//! The degrade path: with Redis out of the picture, an order goes straight to the DB, the
//! conditional UPDATE and the order insert in one transaction (contract section 5).
//!
//! The transaction's first statement reads the switch rows of the order's scopes (`global`,
//! or `rig:<run>` for a drill's product, and `product:<P>`) with a shared lock, and sells only if the higher of them says
//! DEGRADED. This makes the DB, not the engine's last reading, the authority on whether the
//! DB path may sell: a switch change (the guided exit's pause above all) takes the row
//! exclusively, so it waits for every DB-path order already past this check, and every
//! order after it sees the change. An engine whose heartbeat went stale while it waited on
//! the hot row therefore cannot slip an order past the exit, and an instance that chose the
//! DB path by itself (a tripped breaker before its escalation commits) sells nothing while
//! the switch says NORMAL.
//!
//! The conditional UPDATE then locks the product's inventory row, so everything after it in
//! the transaction (the idempotency re-check, the per-user limit check, the insert) is
//! serialised per product: two requests of one buyer cannot both pass the limit, and a
//! retry racing its first request gets the first request's order.
//!
//! Lock order: switch rows (shared), inventory, orders; switch changes never lock inventory.

use std::time::Duration;

use sqlx::{MySql, MySqlPool, Transaction};

use super::is_duplicate;
use super::ledger_write::{deduct, insert_orders, NewOrder, Source};
use super::reserve::{ReserveOutcome, ReserveRequest};
use stockguard_core::switch::{Home, Mode, Scope};

/// Why the DB path did not take an order.
#[derive(Debug, thiserror::Error)]
pub enum DbPathError {
    /// The switch in the DB does not say DEGRADED for this product (NORMAL: Redis sells it;
    /// PAUSED: the guided exit is rebuilding Redis). Nothing was written.
    #[error("the degrade switch says {0} for this product, so the DB path does not sell it")]
    NotDegraded(Mode),
    #[error("the switch holds an unknown mode: {0}")]
    UnknownMode(#[from] stockguard_core::switch::mode::UnknownMode),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// Explicit REPEATABLE READ, whatever the server's default: when the product has no switch
/// row, the shared-lock read finds nothing and only REPEATABLE READ leaves a gap lock where
/// the row would go, so a product-scope pause inserting that row waits for this order too.
/// Under READ COMMITTED (common on MySQL 8 sites) the read would lock nothing and that pause
/// would not wait. (Unlike a waiting exclusive record lock, a waiting insert does not queue
/// later gap locks behind it: under a steady stream of DB-path orders whose products share
/// that gap, writing a product's first switch row can wait up to the lock wait timeout. Only a
/// product's first change made while the DB path sells is exposed; a row once written stays.)
const BEGIN: &str = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ; START TRANSACTION";

async fn existing_order<'e>(
    exec: impl sqlx::MySqlExecutor<'e>,
    req: &ReserveRequest,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar("SELECT order_no FROM orders WHERE user_id = ? AND product_id = ? AND idempotency_key = ?")
        .bind(req.user_id)
        .bind(req.product_id)
        .bind(&req.idempotency_key)
        .fetch_optional(exec)
        .await
}

/// The switch for this product of `home` as the DB says it now (the home's row, global or
/// the drill rig's, and the product's row), its rows held shared until commit.
async fn switch_mode(tx: &mut Transaction<'static, MySql>, home: Home, product_id: u64) -> Result<Mode, DbPathError> {
    let modes: Vec<String> =
        sqlx::query_scalar("SELECT CAST(mode AS CHAR) FROM degrade_switch WHERE scope IN (?, ?) LOCK IN SHARE MODE")
            .bind(home.scope().key())
            .bind(Scope::Product(product_id).key())
            .fetch_all(&mut **tx)
            .await?;
    let mut mode = Mode::Normal; // an absent row is NORMAL
    for m in modes {
        mode = mode.max(m.parse()?);
    }
    Ok(mode)
}

/// Places an order in the DB alone. `NotReady` never comes from here: the DB always knows.
#[tracing::instrument(level = "debug", name = "db_path", skip_all, fields(product_id = req.product_id, order_no = order_no))]
pub async fn place_order(
    pool: &MySqlPool,
    home: Home,
    req: &ReserveRequest,
    order_no: &str,
    payment_timeout: Duration,
) -> Result<ReserveOutcome, DbPathError> {
    // A cheap answer for the common retry, before any lock; the re-check below is the one
    // that decides.
    if let Some(order_no) = existing_order(pool, req).await? {
        return Ok(ReserveOutcome::Replayed { order_no });
    }
    let mut tx = super::metrics::begin_with(pool, BEGIN).await?;
    let mode = switch_mode(&mut tx, home, req.product_id).await?;
    if mode != Mode::Degraded {
        tx.rollback().await?;
        return Err(DbPathError::NotDegraded(mode));
    }
    if !deduct(&mut tx, req.product_id, req.qty).await? {
        tx.rollback().await?;
        return Ok(ReserveOutcome::SoldOut);
    }
    // Holding the product's row now, we see every order committed before us (this is the
    // transaction's first non-locking read, so its snapshot is taken here): a request of
    // the same key that raced ours and won is answered with its order, not LIMIT_REACHED.
    if let Some(order_no) = existing_order(&mut *tx, req).await? {
        tx.rollback().await?;
        return Ok(ReserveOutcome::Replayed { order_no });
    }
    let bought: i64 = sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(buy_count), 0) AS SIGNED) FROM orders \
         WHERE user_id = ? AND product_id = ? AND status IN ('WAIT_PAY', 'PAID')",
    )
    .bind(req.user_id)
    .bind(req.product_id)
    .fetch_one(&mut *tx)
    .await?;
    if bought + req.qty > req.per_user_limit {
        tx.rollback().await?;
        return Ok(ReserveOutcome::LimitReached);
    }
    let deadline = (chrono::Utc::now() + chrono::Duration::from_std(payment_timeout).unwrap_or_default()).naive_utc();
    let order = NewOrder {
        order_no,
        user_id: req.user_id,
        product_id: req.product_id,
        qty: req.qty,
        idempotency_key: &req.idempotency_key,
        source: Source::Db,
        pay_deadline: deadline,
    };
    let inserted = insert_orders(&mut tx, &[order]).await;
    match inserted {
        Ok(_) => {
            tx.commit().await?;
            Ok(ReserveOutcome::Reserved { order_no: order_no.to_string() })
        }
        // The same (user, idempotency key) raced us: answer with its order.
        Err(e) if is_duplicate(&e) => {
            tx.rollback().await?;
            match existing_order(pool, req).await? {
                Some(order_no) => Ok(ReserveOutcome::Replayed { order_no }),
                None => Err(e.into()),
            }
        }
        Err(e) => Err(e.into()),
    }
}
