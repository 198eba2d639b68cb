//! Persist: turn reservation messages into `orders` rows, exactly once.
//!
//! A batch of one product's messages is written in one transaction: the conditional
//! `UPDATE inventory ... WHERE stock >= total` for the batch's total, then one multi-row
//! INSERT. When the batch does not fit (not enough DB stock for all of it, or an order
//! number already present because a message was delivered twice), it falls back to one
//! transaction per order. Only after commit are the in-flight entries removed and the
//! messages acknowledged, in one atomic Redis step; a consumer that dies before that leaves
//! them pending for another consumer to reclaim (`XAUTOCLAIM`).

use std::collections::HashSet;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::MySqlPool;

use super::is_duplicate;
use super::ledger_write::{deduct, insert_orders, NewOrder, Source};

use stockguard_core::keys::{Keys, PERSIST_GROUP};
use stockguard_core::reservation::ReservationMessage;
use stockguard_core::step::{RedisStepFailed, Step as _, StepFailed};

/// A message read from a product's stream: its id and its parsed body.
#[derive(Debug, Clone)]
pub struct StreamMessage {
    pub id: String,
    pub body: ReservationMessage,
}

/// What became of each message of a batch.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct BatchOutcome {
    /// Newly written orders.
    pub persisted: Vec<String>,
    /// Already in the DB (a message delivered twice): acknowledged, nothing written.
    pub duplicates: Vec<String>,
    /// Refused by the DB's conditional update: Redis over-issued. Recorded as FAILED.
    pub failed: Vec<String>,
    /// Stream message ids (not order numbers: the number is shared) of reservations whose
    /// order number is already another buyer's order. Recorded as FAILED (`ORDER_NO_CLASH`)
    /// for that buyer; the unit goes back to Redis stock, as the DB never took it.
    pub clashed: Vec<String>,
    /// True when the batch fell back to one transaction per order.
    pub fell_back: bool,
}

/// A batch that could not be written or confirmed, named by its step (the server's words kept
/// as the cause).
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    #[error(transparent)]
    Db(#[from] StepFailed),
    #[error(transparent)]
    Redis(#[from] RedisStepFailed),
}

fn new_order(msg: &ReservationMessage, payment_timeout: Duration) -> NewOrder<'_> {
    NewOrder {
        order_no: &msg.order_no,
        user_id: msg.user_id,
        product_id: msg.product_id,
        qty: msg.qty,
        idempotency_key: &msg.idempotency_key,
        source: Source::Redis { reserve_seq: msg.seq, reserve_epoch: msg.epoch },
        pay_deadline: deadline(msg, payment_timeout).naive_utc(),
    }
}

fn deadline(msg: &ReservationMessage, payment_timeout: Duration) -> DateTime<Utc> {
    DateTime::<Utc>::from_timestamp_millis(msg.reserved_at_ms).unwrap_or_else(Utc::now)
        + chrono::Duration::from_std(payment_timeout).unwrap_or_default()
}

/// Writes one product's batch to the DB and then confirms it in Redis.
#[tracing::instrument(level = "debug", name = "persist", skip_all, fields(product_id = product_id, messages = batch.len()))]
pub async fn persist_batch<C>(
    pool: &MySqlPool,
    redis: &mut C,
    keys: &Keys,
    product_id: u64,
    batch: &[StreamMessage],
    payment_timeout: Duration,
) -> Result<BatchOutcome, PersistError>
where
    C: redis::aio::ConnectionLike + Send,
{
    let outcome = write_batch(pool, product_id, batch, payment_timeout).await?;
    if !batch.is_empty() {
        confirm(redis, keys, product_id, batch, &outcome).await?;
    }
    Ok(outcome)
}

/// The DB half: commits the batch (or each order of it). Until [`confirm`] runs, the
/// messages stay pending and their in-flight entries stay; a crash here loses nothing.
pub async fn write_batch(
    pool: &MySqlPool,
    product_id: u64,
    batch: &[StreamMessage],
    payment_timeout: Duration,
) -> Result<BatchOutcome, PersistError> {
    let mut outcome = BatchOutcome::default();
    if batch.is_empty() {
        return Ok(outcome);
    }
    // A reservation already failed back to its buyer must never become an order afterwards:
    // the engine that took it may have written it itself, been refused by the DB and said
    // so (`replicas`), and stock freed since would now let it through.
    let failed_back = failed_back(pool, batch).await.step("reading which of the batch's orders were failed back")?;
    let owned: Vec<StreamMessage>;
    let batch = if failed_back.is_empty() {
        batch
    } else {
        let (done, rest): (Vec<_>, Vec<_>) =
            batch.iter().cloned().partition(|m| failed_back.contains(&m.body.order_no));
        outcome.failed = done.into_iter().map(|m| m.body.order_no).collect();
        owned = rest;
        &owned
    };
    if batch.is_empty() {
        return Ok(outcome);
    }
    if try_whole_batch(pool, product_id, batch, payment_timeout).await? {
        outcome.persisted = batch.iter().map(|m| m.body.order_no.clone()).collect();
        super::metrics::get().persisted.inc_by(batch.len() as u64);
        return Ok(outcome);
    }
    outcome.fell_back = true;
    for msg in batch {
        match persist_one(pool, &msg.body, payment_timeout).await? {
            One::Persisted => outcome.persisted.push(msg.body.order_no.clone()),
            One::Duplicate => outcome.duplicates.push(msg.body.order_no.clone()),
            One::Refused => outcome.failed.push(msg.body.order_no.clone()),
            One::Clashed => outcome.clashed.push(msg.id.clone()),
        }
    }
    let m = super::metrics::get();
    m.persisted.inc_by(outcome.persisted.len() as u64);
    m.failed_orders.inc_by((outcome.failed.len() + outcome.clashed.len()) as u64);
    Ok(outcome)
}

/// The order numbers of `batch` that the DB has already failed back (`order_failures`). A
/// clash is left out: its number is another buyer's order, which `settle_existing` finds.
async fn failed_back(pool: &MySqlPool, batch: &[StreamMessage]) -> Result<HashSet<String>, sqlx::Error> {
    let mut query = sqlx::QueryBuilder::new(
        "SELECT order_no FROM order_failures WHERE reason <> 'ORDER_NO_CLASH' AND order_no IN (",
    );
    let mut list = query.separated(", ");
    for m in batch {
        list.push_bind(&m.body.order_no);
    }
    list.push_unseparated(")");
    let rows: Vec<String> = query.build_query_scalar().fetch_all(pool).await?;
    Ok(rows.into_iter().collect())
}

/// The order numbers of `messages` already in the DB as these very reservations (the same
/// buyer and idempotency key): written by someone else first, so nothing is left to write.
pub async fn stored_already(
    pool: &MySqlPool,
    messages: &[&ReservationMessage],
) -> Result<HashSet<String>, sqlx::Error> {
    if messages.is_empty() {
        return Ok(HashSet::new());
    }
    let mut query =
        sqlx::QueryBuilder::new("SELECT order_no, user_id, idempotency_key FROM orders WHERE order_no IN (");
    let mut list = query.separated(", ");
    for m in messages {
        list.push_bind(&m.order_no);
    }
    list.push_unseparated(")");
    let rows: Vec<(String, u64, Vec<u8>)> = query.build_query_as().fetch_all(pool).await?;
    let by_number: std::collections::HashMap<&str, &ReservationMessage> =
        messages.iter().map(|m| (m.order_no.as_str(), *m)).collect();
    Ok(rows
        .into_iter()
        .filter(|(order_no, user, key)| {
            by_number.get(order_no.as_str()).is_some_and(|m| m.user_id == *user && m.idempotency_key.as_bytes() == key)
        })
        .map(|(order_no, ..)| order_no)
        .collect())
}

/// The fast path: one conditional UPDATE for the whole batch and one multi-row INSERT.
/// `Ok(false)` when the batch does not fit and nothing was written.
async fn try_whole_batch(
    pool: &MySqlPool,
    product_id: u64,
    batch: &[StreamMessage],
    payment_timeout: Duration,
) -> Result<bool, PersistError> {
    let total: i64 = batch.iter().map(|m| m.body.qty).sum();
    let mut tx = super::metrics::begin(pool).await.step("beginning the batch's transaction")?;
    if !deduct(&mut tx, product_id, total).await.step("deducting the batch's units")? {
        tx.rollback().await.step("rolling back a batch that does not fit")?;
        return Ok(false);
    }
    let orders: Vec<NewOrder> = batch.iter().map(|m| new_order(&m.body, payment_timeout)).collect();
    match insert_orders(&mut tx, &orders).await {
        Ok(_) => {
            tx.commit().await.step("committing the batch")?;
            Ok(true)
        }
        Err(e) if is_duplicate(&e) => {
            tx.rollback().await.step("rolling back a batch holding a duplicate")?;
            Ok(false)
        }
        Err(source) => Err(StepFailed { step: "inserting the batch's orders", source }.into()),
    }
}

enum One {
    Persisted,
    Duplicate,
    Refused,
    /// The order number is another buyer's order.
    Clashed,
}

/// Whose order, if any, already holds a message's order number.
enum Holder {
    Nobody,
    /// The same buyer and idempotency key: this message, delivered again.
    ThisReservation,
    /// A different reservation under the same number (two engines issued it).
    Another,
}

async fn holder_of(pool: &MySqlPool, msg: &ReservationMessage) -> Result<Holder, sqlx::Error> {
    let row: Option<(u64, Vec<u8>)> = sqlx::query_as("SELECT user_id, idempotency_key FROM orders WHERE order_no = ?")
        .bind(&msg.order_no)
        .fetch_optional(pool)
        .await?;
    Ok(match row {
        None => Holder::Nobody,
        Some((user, key)) if user == msg.user_id && key == msg.idempotency_key.as_bytes() => Holder::ThisReservation,
        Some(_) => Holder::Another,
    })
}

/// What an order number already in the DB means for this message: a redelivery is done with;
/// someone else's order means this buyer's reservation cannot be written, and they must be
/// told so (FAILED), never be shown the other buyer's order.
async fn settle_existing(pool: &MySqlPool, msg: &ReservationMessage) -> Result<Option<One>, sqlx::Error> {
    match holder_of(pool, msg).await? {
        Holder::Nobody => Ok(None),
        Holder::ThisReservation => Ok(Some(One::Duplicate)),
        Holder::Another => {
            record_failure(pool, msg, "ORDER_NO_CLASH").await?;
            tracing::error!(order_no = %msg.order_no, user_id = msg.user_id, "order number already another buyer's order: failed back");
            Ok(Some(One::Clashed))
        }
    }
}

#[tracing::instrument(level = "debug", name = "persist_one", skip_all, fields(order_no = msg.order_no.as_str()))]
async fn persist_one(
    pool: &MySqlPool,
    msg: &ReservationMessage,
    payment_timeout: Duration,
) -> Result<One, PersistError> {
    if let Some(settled) = settle_existing(pool, msg).await.step("looking up the order's number")? {
        return Ok(settled);
    }
    let mut tx = super::metrics::begin(pool).await.step("beginning the order's transaction")?;
    if !deduct(&mut tx, msg.product_id, msg.qty).await.step("deducting the order's units")? {
        tx.rollback().await.step("rolling back an order the stock refused")?;
        // Another consumer may have written it meanwhile (a reclaimed message): then it is
        // a duplicate, not a refusal.
        if let Some(settled) = settle_existing(pool, msg).await.step("looking up the refused order's number")? {
            return Ok(settled);
        }
        record_failure(pool, msg, "DB_REFUSED_STOCK").await.step("recording the refused order")?;
        tracing::warn!(order_no = %msg.order_no, product_id = msg.product_id, "Redis over-issued: the DB refused an accepted order");
        return Ok(One::Refused);
    }
    let inserted = insert_orders(&mut tx, &[new_order(msg, payment_timeout)]).await;
    match inserted {
        Ok(_) => {
            tx.commit().await.step("committing the order")?;
            Ok(One::Persisted)
        }
        Err(e) if is_duplicate(&e) => {
            tx.rollback().await.step("rolling back an order whose number is taken")?;
            // Which unique key? The order number: a message seen twice. Anything else (the
            // buyer's idempotency key taken by another order) would mean an accepted order the
            // DB cannot hold: fail it back explicitly rather than acknowledge it as done.
            match settle_existing(pool, msg).await.step("looking up who holds the order's number")? {
                Some(settled) => Ok(settled),
                None => {
                    record_failure(pool, msg, "IDEMPOTENCY_CONFLICT").await.step("recording the conflicting order")?;
                    Ok(One::Refused)
                }
            }
        }
        Err(source) => Err(StepFailed { step: "inserting the order", source }.into()),
    }
}

async fn record_failure(pool: &MySqlPool, msg: &ReservationMessage, reason: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT IGNORE INTO order_failures (order_no, product_id, user_id, qty, reason) VALUES (?, ?, ?, ?, ?)",
    )
    .bind(&msg.order_no)
    .bind(msg.product_id)
    .bind(msg.user_id)
    .bind(msg.qty)
    .bind(reason)
    .execute(pool)
    .await?;
    Ok(())
}

/// After commit: remove the in-flight entries, give refused buyers their per-user allowance
/// back (and clashed ones their unit), acknowledge and delete the messages, all in one MULTI.
pub async fn confirm<C>(
    redis: &mut C,
    keys: &Keys,
    product_id: u64,
    batch: &[StreamMessage],
    outcome: &BatchOutcome,
) -> Result<(), PersistError>
where
    C: redis::aio::ConnectionLike + Send,
{
    let mut pipe = redis::pipe();
    pipe.atomic();
    let order_nos: Vec<&str> = batch.iter().map(|m| m.body.order_no.as_str()).collect();
    pipe.hdel(keys.inflight(product_id), &order_nos).ignore();
    for m in batch.iter().filter(|m| outcome.failed.contains(&m.body.order_no) && !outcome.clashed.contains(&m.id)) {
        pipe.hincr(keys.buyers(product_id), m.body.user_id, -m.body.qty).ignore();
    }
    // A clashed reservation took a unit from Redis that the DB never sold: give it back.
    for m in batch.iter().filter(|m| outcome.clashed.contains(&m.id)) {
        pipe.hincr(keys.buyers(product_id), m.body.user_id, -m.body.qty).ignore();
        pipe.incr(keys.stock(product_id), m.body.qty).ignore();
    }
    let ids: Vec<&str> = batch.iter().map(|m| m.id.as_str()).collect();
    pipe.xack(keys.orders_stream(product_id), PERSIST_GROUP, &ids).ignore();
    // Acknowledged messages are done with: delete them, so the stream holds only what is
    // still to be persisted and its memory stays bounded through a long sale.
    pipe.xdel(keys.orders_stream(product_id), &ids).ignore();
    let _: () = pipe.query_async(redis).await.step("confirming the batch (in-flight entries, acknowledgements)")?;
    Ok(())
}
