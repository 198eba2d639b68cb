//! On a replica, or in the DB, before "accepted": what makes an accepted order outlive a
//! Redis failover.
//!
//! Redis replicates asynchronously. A master that dies takes with it the reservations its
//! replica had not yet received, and with them the stream messages that were the only record
//! of orders already answered "accepted" (the `redis-failover-loss` drill lost 6 this way).
//! With `replica_acks = n`, a new reservation is answered "accepted" only once `n` replicas
//! have it (`WAIT n timeout`), or, when they do not say so in time, once the engine has
//! written the order to the DB itself with the consumer's own idempotent write
//! ([`super::persist::write_batch`]). Either way the order survives the master; what the
//! promoted replica then lacks is a deduction, which the reading sees as `REDIS_HIGH` and a
//! fenced rewrite repairs.
//!
//! `WAIT` vouches for the writes of the connection it is sent on, so a reservation and its
//! `WAIT` must share a connection that never reconnects behind our back: the gate keeps a
//! plain multiplexed connection (not the manager) under a generation number, and a `WAIT`
//! vouches only for reservations made on its own generation. One `WAIT` vouches for every
//! reservation whose answer came back before it was sent (group commit), so a stalled replica
//! costs each order the timeout once instead of serialising the connection behind one `WAIT`
//! per order.
//!
//! On Redis Cluster the connections are the cluster client's, so there is no connection of
//! ours to keep: each reservation is sent with its own `WAIT` in one pipeline
//! ([`super::reserve::Reserver::reserve_and_wait`]), which the client sends as a whole to the
//! master of the product's slot, on one connection. If the client retries the pipeline on
//! the promoted replica after a failover, the `WAIT` there again follows the script it
//! vouches for.

use std::sync::Arc;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use tokio::sync::{mpsc, oneshot, Mutex};

/// The connection reservations and their `WAIT` share, and which one it is.
#[derive(Clone)]
pub struct Link {
    pub generation: u64,
    pub conn: MultiplexedConnection,
}

/// A reservation waiting to be vouched for.
struct Waiter {
    generation: u64,
    answer: oneshot::Sender<bool>,
}

struct Links {
    client: redis::Client,
    current: Mutex<Option<Link>>,
    generations: std::sync::atomic::AtomicU64,
}

impl Links {
    /// Forgets the link of `generation` if it is still the current one: the next caller
    /// connects afresh, under a new generation.
    async fn broken(&self, generation: u64) {
        let mut current = self.current.lock().await;
        if current.as_ref().is_some_and(|l| l.generation == generation) {
            *current = None;
        }
    }
}

/// The replica acknowledgement gate of one engine instance.
pub struct ReplicaGate {
    links: Arc<Links>,
    queue: mpsc::UnboundedSender<Waiter>,
    /// On a cluster: (replicas, timeout) for the `WAIT` sent with each reservation; the links
    /// and the queue are then unused.
    per_reservation: Option<(usize, Duration)>,
}

impl ReplicaGate {
    /// A gate on the Redis at `url`, asking `replicas` replicas to acknowledge within
    /// `timeout`; its `WAIT`s run on a task of their own until the gate is dropped. It
    /// connects on first use.
    pub fn start(url: &str, replicas: usize, timeout: Duration) -> redis::RedisResult<Self> {
        let cluster = stockguard_core::redis_link::is_cluster_url(url);
        // On a cluster the links are never used; the client is only there to have one.
        let first_seed = stockguard_core::redis_link::seeds(url).first().copied().unwrap_or(url);
        let client = redis::Client::open(first_seed)?;
        let links =
            Arc::new(Links { client, current: Mutex::new(None), generations: std::sync::atomic::AtomicU64::new(0) });
        let (queue, waiting) = mpsc::unbounded_channel();
        if !cluster {
            tokio::spawn(vouch_in_groups(links.clone(), waiting, replicas, timeout));
        }
        Ok(Self { links, queue, per_reservation: cluster.then_some((replicas, timeout)) })
    }

    /// The current link, connecting a new one when there is none.
    pub async fn link(&self) -> redis::RedisResult<Link> {
        let mut current = self.links.current.lock().await;
        if let Some(link) = current.as_ref() {
            return Ok(link.clone());
        }
        let conn = self.links.client.get_multiplexed_async_connection().await?;
        let generation = self.links.generations.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let link = Link { generation, conn };
        *current = Some(link.clone());
        Ok(link)
    }

    /// A call on the link of `generation` failed: it is not used again.
    pub async fn broken(&self, generation: u64) {
        self.links.broken(generation).await;
    }

    /// Whether enough replicas have every write made on the link of `generation` so far.
    /// False when they did not say so within the timeout, or the link broke meanwhile.
    pub async fn vouch(&self, generation: u64) -> bool {
        let (answer, told) = oneshot::channel();
        if self.queue.send(Waiter { generation, answer }).is_err() {
            return false;
        }
        told.await.unwrap_or(false)
    }
}

/// Sends one `WAIT` for everyone queued since the last one, and tells each of them.
async fn vouch_in_groups(
    links: Arc<Links>,
    mut waiting: mpsc::UnboundedReceiver<Waiter>,
    replicas: usize,
    timeout: Duration,
) {
    // WAIT answers by its own timeout; this bound is for a master that does not answer at all.
    let patience = timeout + Duration::from_millis(500);
    let millis = timeout.as_millis().max(1) as u64;
    while let Some(first) = waiting.recv().await {
        let mut group = vec![first];
        while let Ok(more) = waiting.try_recv() {
            group.push(more);
        }
        let link = links.current.lock().await.clone();
        let vouched = match link {
            Some(link) => {
                let mut conn = link.conn.clone();
                let mut wait = redis::cmd("WAIT");
                wait.arg(replicas).arg(millis);
                match tokio::time::timeout(patience, wait.query_async::<i64>(&mut conn)).await {
                    Ok(Ok(acked)) => Some((link.generation, acked >= replicas as i64)),
                    _ => {
                        links.broken(link.generation).await;
                        None
                    }
                }
            }
            None => None,
        };
        for w in group {
            let ok = matches!(vouched, Some((generation, true)) if generation == w.generation);
            let _ = w.answer.send(ok);
        }
    }
}

/// Why a vouched reservation got no answer.
#[derive(Debug, thiserror::Error)]
pub enum VouchedError {
    #[error(transparent)]
    Redis(#[from] super::state::RedisCallError),
    /// No replica had it in time and the DB write failed too: the buyer is told "try again",
    /// never "accepted".
    #[error("no replica acknowledged the reservation and writing it to the DB failed: {0}")]
    WriteThrough(#[from] super::persist::PersistError),
    /// Written to the DB, but its number is another buyer's order (two engines issued it).
    #[error("order number {0} already belongs to another order")]
    Clashed(String),
}

/// Reserves on the gate's link and answers only once the reservation is on `replicas`
/// replicas or in the DB. A DB that refuses it (Redis over-issued) is recorded as the
/// consumer records it (`order_failures`) and the buyer is told sold out; the consumer then
/// finds it failed back and never makes it an order.
pub async fn reserve_vouched(
    state: &super::state::EngineState,
    gate: &ReplicaGate,
    reserver: &super::reserve::Reserver,
    request: &super::reserve::ReserveRequest,
) -> Result<super::ReserveOutcome, VouchedError> {
    use super::persist::{write_batch, StreamMessage};
    let (outcome, message, vouched) = match gate.per_reservation {
        Some((replicas, timeout)) => {
            let mut conn = state.redis.clone();
            let millis = timeout.as_millis().max(1) as u64;
            let reserved = super::metrics::timed(
                &super::metrics::get().redis_seconds,
                state.redis_call(reserver.reserve_and_wait(&mut conn, &state.keys, request, replicas, millis)),
            )
            .await?;
            let (outcome, message, acked) = reserved;
            (outcome, message, acked >= replicas as i64)
        }
        None => reserve_on_link(state, gate, reserver, request).await?,
    };
    let Some(message) = message else {
        return Ok(outcome);
    };
    if vouched {
        return Ok(outcome);
    }
    super::metrics::get().written_through.inc();
    let order_no = message.order_no.clone();
    tracing::debug!(%order_no, "no replica acknowledged in time: writing the order to the DB");
    // The stream id is not needed: the consumer acknowledges the message when it comes to it.
    let batch = [StreamMessage { id: String::new(), body: message }];
    let written = write_batch(&state.pool, request.product_id, &batch, state.config.payment_timeout).await?;
    if !written.persisted.is_empty() || !written.duplicates.is_empty() {
        Ok(outcome)
    } else if !written.failed.is_empty() {
        Ok(super::ReserveOutcome::SoldOut)
    } else {
        Err(VouchedError::Clashed(order_no))
    }
}

/// One server: reserves on the gate's link, then waits for the group `WAIT` of its
/// generation. Returns the outcome, the message of a new reservation and whether replicas
/// vouched for it.
async fn reserve_on_link(
    state: &super::state::EngineState,
    gate: &ReplicaGate,
    reserver: &super::reserve::Reserver,
    request: &super::reserve::ReserveRequest,
) -> Result<(super::ReserveOutcome, Option<stockguard_core::reservation::ReservationMessage>, bool), VouchedError> {
    let link = state.redis_call(gate.link()).await?;
    let mut conn = link.conn.clone();
    let reserved = super::metrics::timed(
        &super::metrics::get().redis_seconds,
        state.redis_call(reserver.reserve_message(&mut conn, &state.keys, request)),
    )
    .await;
    let (outcome, message) = match reserved {
        Ok(answer) => answer,
        Err(e) => {
            gate.broken(link.generation).await;
            return Err(e.into());
        }
    };
    if message.is_none() {
        return Ok((outcome, None, true));
    }
    let vouched = gate.vouch(link.generation).await;
    Ok((outcome, message, vouched))
}
