//! The write-through in groups: orders no replica vouched for in time, written to the DB
//! together before their buyers are answered.
//!
//! When a replica stalls, every `WAIT` runs out its timeout, and every order it covered must
//! be in the DB before its answer. Written one by one, each order was a transaction of its own
//! on the product's one hot `inventory` row, and they queued behind each other: the first
//! measurement of issue 30 found a p99 of 8.6 to 10.7 timeouts. Here, as the group `WAIT`
//! does for the replicas ([`super::replicas::node`]), one task per product takes every order
//! queued since its last write and writes them as one batch with the consumer's idempotent
//! write ([`super::persist::write_batch`]: one conditional `UPDATE` by the batch's total and
//! one multi-row `INSERT`; one transaction per order only when the batch does not fit). After
//! its failed `WAIT`, an order then waits at most two batches' writes, not a queue of
//! single-order transactions.
//!
//! Each order still gets its own answer: in the DB (written now, or already by a consumer),
//! refused by the DB (recorded in `order_failures`), or its number another buyer's.
//!
//! When Redis may hold more than the DB (its history is not proven whole, after a failover
//! to a replica that lacked deductions: [`super::history`]), a batch never jumps the queue:
//! before its own orders it writes what the product's stream still holds
//! ([`super::backlog`]), so that an order a buyer was already told is ACCEPTED takes its unit
//! from the DB before an order not yet answered can; the DB then refuses the orders not yet
//! answered, never the accepted ones. While the history is whole the DB has a unit for every
//! reservation, and the batch writes its own orders only.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use sqlx::MySqlPool;
use stockguard_core::keys::Keys;
use stockguard_core::redis_link::RedisLink;
use stockguard_core::reservation::ReservationMessage;
use stockguard_core::step::{Step as _, StepFailed};
use tokio::sync::{mpsc, oneshot};

use super::backlog::BacklogError;
use super::persist::{stored_already, write_batch, PersistError, StreamMessage};

/// Most orders one write takes; the rest wait for the next.
const MAX_BATCH: usize = 500;

/// How long reading a product's stream backlog may take: a master that stalls fails the
/// batch (its buyers are told to try again) instead of holding the product's writes.
const BACKLOG_PATIENCE: Duration = Duration::from_secs(2);

/// What a write-through writes ahead of an order.
#[derive(Clone)]
pub enum Ahead {
    /// Nothing: the product's Redis history is whole, so the DB has a unit for every
    /// reservation.
    Nothing,
    /// The product's stream backlog, read on the connection the order was reserved on
    /// (after a failover the engine's own Redis link may still be looking for the new
    /// master), or through the engine's Redis link.
    Backlog(Option<MultiplexedConnection>),
}

/// What became of one order written through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// In the DB: written now, or already (a consumer got there first).
    Stored,
    /// Refused by the DB's conditional update (Redis over-issued); recorded in `order_failures`.
    Refused,
    /// Its order number is already another buyer's order; recorded in `order_failures`.
    Clashed,
}

/// Why an order could not be written through.
#[derive(Debug, Clone, thiserror::Error)]
pub enum WriteThroughError {
    /// The batch it was in failed (every order of that batch is told so).
    #[error("{0}")]
    Batch(Arc<PersistError>),
    /// The product's stream backlog, which goes to the DB first, could not be read (the batch
    /// wrote nothing of its own).
    #[error("{0}")]
    Backlog(Arc<BacklogError>),
    /// The product's write task is gone (it panicked).
    #[error("the write-through task of product {0} stopped")]
    Stopped(u64),
}

impl From<PersistError> for WriteThroughError {
    fn from(e: PersistError) -> Self {
        Self::Batch(Arc::new(e))
    }
}

impl From<BacklogError> for WriteThroughError {
    fn from(e: BacklogError) -> Self {
        Self::Backlog(Arc::new(e))
    }
}

impl From<StepFailed> for WriteThroughError {
    fn from(e: StepFailed) -> Self {
        Self::from(PersistError::from(e))
    }
}

/// How much one engine instance has written through (`/health`'s `write_through`): orders,
/// and the batches they were written in.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct WriteThroughCounts {
    pub orders: u64,
    pub batches: u64,
}

#[derive(Default)]
struct Counts {
    orders: AtomicU64,
    batches: AtomicU64,
}

struct Pending {
    body: ReservationMessage,
    ahead: Ahead,
    answer: oneshot::Sender<Result<Written, WriteThroughError>>,
}

/// One engine instance's write-through: a queue and a task per product, started on the
/// product's first order written through, ended when this is dropped.
pub struct WriteThrough {
    pool: MySqlPool,
    redis: RedisLink,
    keys: Keys,
    payment_timeout: Duration,
    queues: Mutex<HashMap<u64, mpsc::UnboundedSender<Pending>>>,
    counts: Arc<Counts>,
}

impl WriteThrough {
    /// Writes to `pool`, reading the streams' backlog through `redis` under `keys`.
    pub fn new(pool: MySqlPool, redis: RedisLink, keys: Keys, payment_timeout: Duration) -> Self {
        Self { pool, redis, keys, payment_timeout, queues: Mutex::default(), counts: Arc::default() }
    }

    /// Writes the order of `body` to the DB with the others queued for its product, after
    /// what `ahead` says, and says what became of it.
    pub async fn write(&self, body: ReservationMessage, ahead: Ahead) -> Result<Written, WriteThroughError> {
        let product_id = body.product_id;
        let queue = {
            let mut queues = self.queues.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            queues
                .entry(product_id)
                .or_insert_with(|| {
                    let (queue, waiting) = mpsc::unbounded_channel();
                    let batches = Batches {
                        pool: self.pool.clone(),
                        redis: self.redis.clone(),
                        keys: self.keys.clone(),
                        product_id,
                        payment_timeout: self.payment_timeout,
                        counts: self.counts.clone(),
                    };
                    tokio::spawn(batches.run(waiting));
                    queue
                })
                .clone()
        };
        let (answer, told) = oneshot::channel();
        if queue.send(Pending { body, ahead, answer }).is_err() {
            return Err(WriteThroughError::Stopped(product_id));
        }
        told.await.unwrap_or(Err(WriteThroughError::Stopped(product_id)))
    }

    pub fn counts(&self) -> WriteThroughCounts {
        WriteThroughCounts {
            orders: self.counts.orders.load(Ordering::Relaxed),
            batches: self.counts.batches.load(Ordering::Relaxed),
        }
    }
}

/// The write task of one product.
struct Batches {
    pool: MySqlPool,
    redis: RedisLink,
    keys: Keys,
    product_id: u64,
    payment_timeout: Duration,
    counts: Arc<Counts>,
}

impl Batches {
    /// Writes everyone queued since the last write as one batch, and tells each of them.
    async fn run(self, mut waiting: mpsc::UnboundedReceiver<Pending>) {
        while let Some(first) = waiting.recv().await {
            // The orders of one `WAIT` are woken together: let the others queue behind this one.
            tokio::task::yield_now().await;
            let mut group = vec![first];
            while group.len() < MAX_BATCH {
                match waiting.try_recv() {
                    Ok(more) => group.push(more),
                    Err(_) => break,
                }
            }
            self.counts.orders.fetch_add(group.len() as u64, Ordering::Relaxed);
            self.counts.batches.fetch_add(1, Ordering::Relaxed);
            super::metrics::get().write_through_batches.inc();
            match self.write(&group).await {
                Ok(written) => {
                    for (pending, written) in group.into_iter().zip(written) {
                        let _ = pending.answer.send(Ok(written));
                    }
                }
                Err(e) => {
                    tracing::warn!(product_id = self.product_id, orders = group.len(), error = %e, "writing orders through to the DB failed");
                    for pending in group {
                        let _ = pending.answer.send(Err(e.clone()));
                    }
                }
            }
        }
    }

    /// What became of each order of `group`, in its order. Orders a consumer already wrote
    /// are left out of the batch, so that one early consumer does not send the whole batch
    /// down the one-transaction-per-order path.
    async fn write(&self, group: &[Pending]) -> Result<Vec<Written>, WriteThroughError> {
        let bodies: Vec<&ReservationMessage> = group.iter().map(|p| &p.body).collect();
        let backlog = group.iter().rev().find_map(|p| match &p.ahead {
            Ahead::Backlog(via) => Some(via.clone()),
            Ahead::Nothing => None,
        });
        if let Some(via) = backlog {
            self.write_backlog(&bodies, via).await?;
        }
        let stored = stored_already(&self.pool, &bodies).await.step("looking up the orders already written")?;
        // The stream id is not needed (the consumer acknowledges the message when it comes to
        // it); the batch's own index stands in for it, to tell a clashed order by.
        let batch: Vec<StreamMessage> = group
            .iter()
            .enumerate()
            .filter(|(_, p)| !stored.contains(&p.body.order_no))
            .map(|(i, p)| StreamMessage { id: i.to_string(), body: p.body.clone() })
            .collect();
        let outcome = write_batch(&self.pool, self.product_id, &batch, self.payment_timeout)
            .await
            .map_err(WriteThroughError::from)?;
        let in_db: HashSet<&String> = outcome.persisted.iter().chain(&outcome.duplicates).collect();
        let refused: HashSet<&String> = outcome.failed.iter().collect();
        Ok(group
            .iter()
            .map(|p| {
                let order_no = &p.body.order_no;
                if stored.contains(order_no) || in_db.contains(order_no) {
                    Written::Stored
                } else if refused.contains(order_no) {
                    Written::Refused
                } else {
                    Written::Clashed
                }
            })
            .collect())
    }

    /// Writes what the product's stream holds, other than `own`, to the DB (oldest first, in
    /// batches, as a consumer would; what the DB already has is left out), so that none of
    /// `own` takes a unit an accepted order is still waiting for.
    async fn write_backlog(
        &self,
        own: &[&ReservationMessage],
        via: Option<MultiplexedConnection>,
    ) -> Result<(), WriteThroughError> {
        let read = async {
            match via {
                Some(mut conn) => super::backlog::read(&mut conn, &self.keys, self.product_id).await,
                None => super::backlog::read(&mut self.redis.clone(), &self.keys, self.product_id).await,
            }
        };
        let held = tokio::time::timeout(BACKLOG_PATIENCE, read)
            .await
            .map_err(|_| BacklogError::TimedOut { product_id: self.product_id, after: BACKLOG_PATIENCE })??;
        let own: HashSet<&str> = own.iter().map(|m| m.order_no.as_str()).collect();
        let ahead: Vec<StreamMessage> = held.into_iter().filter(|m| !own.contains(m.body.order_no.as_str())).collect();
        for chunk in ahead.chunks(MAX_BATCH) {
            let bodies: Vec<&ReservationMessage> = chunk.iter().map(|m| &m.body).collect();
            let stored =
                stored_already(&self.pool, &bodies).await.step("looking up the backlog's orders already written")?;
            let rest: Vec<StreamMessage> =
                chunk.iter().filter(|m| !stored.contains(&m.body.order_no)).cloned().collect();
            if rest.is_empty() {
                continue;
            }
            let outcome = write_batch(&self.pool, self.product_id, &rest, self.payment_timeout).await?;
            tracing::info!(
                product_id = self.product_id,
                written = outcome.persisted.len(),
                refused = outcome.failed.len(),
                "wrote the stream's backlog to the DB ahead of orders written through"
            );
        }
        Ok(())
    }
}
