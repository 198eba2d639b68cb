//! On a replica, or in the DB, before "accepted": what makes an accepted order outlive a
//! Redis failover.
//!
//! Redis replicates asynchronously. A master that dies takes with it the reservations its
//! replica had not yet received, and with them the stream messages that were the only record
//! of orders already answered "accepted" (the `redis-failover-loss` drill lost 6 this way).
//! With a replica gate, a new reservation is answered "accepted" only once `n` replicas have
//! it (`WAIT n timeout`), or, when they do not say so in time, once the engine has written
//! the order to the DB itself with the consumer's own idempotent write
//! ([`super::persist::write_batch`]). Either way the order survives the master; what the
//! promoted replica then lacks is a deduction, which the reading sees as `REDIS_HIGH` and a
//! fenced rewrite repairs.
//!
//! The gate is on by default: an engine that finds replicas behind its Redis vouches for
//! every new reservation ([`guarantee`]); `--replica-acks 0` is the logged opt-out.
//!
//! Reservations are made on connections of the gate's own, one per master ([`node`]), so
//! that one `WAIT` per master vouches for every reservation answered on it before the `WAIT`
//! was sent (group commit). On Redis Cluster the gate finds the product's master in the node
//! table it reads itself ([`cluster`], [`topology`]): a lagging replica delays only its own
//! master's orders, each by one timeout, not a queue of them.

pub mod cluster;
pub mod guarantee;
pub mod node;
pub mod topology;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redis::IntoConnectionInfo as _;
use stockguard_core::redis_link::{product_slot, seeds, RedisLink};

use cluster::ClusterNodes;
use guarantee::{Guarantee, ReplicaAcks};
use node::Node;

/// How long a replica may take to acknowledge before the order is written to the DB instead
/// (`engine serve --replica-ack-timeout-ms`).
pub const DEFAULT_ACK_TIMEOUT: Duration = Duration::from_millis(50);

enum Masters {
    Single(Node),
    Cluster(ClusterNodes),
}

/// The replica acknowledgement gate of one engine instance.
pub struct ReplicaGate {
    masters: Masters,
    /// Whether the last new reservation was written to the DB (no replica in time).
    written_through: AtomicBool,
}

impl ReplicaGate {
    /// A gate on the Redis at `url` (one server, or a cluster's comma-separated seeds), asking
    /// `replicas` replicas to acknowledge within `timeout`. It connects on first use.
    pub fn start(url: &str, replicas: usize, timeout: Duration) -> redis::RedisResult<Self> {
        let infos = seeds(url).into_iter().map(|s| s.into_connection_info()).collect::<redis::RedisResult<Vec<_>>>()?;
        Self::on(infos, replicas, timeout)
    }

    /// [`Self::start`] on the server or seed nodes `infos` reach (several: a cluster).
    pub fn on(infos: Vec<redis::ConnectionInfo>, replicas: usize, timeout: Duration) -> redis::RedisResult<Self> {
        let masters = match <[_; 1]>::try_from(infos) {
            Ok([one]) => Masters::Single(Node::start(one, replicas, timeout)?),
            Err(infos) if infos.is_empty() => {
                return Err(redis::RedisError::from((redis::ErrorKind::InvalidClientConfig, "no Redis to vouch on")))
            }
            Err(infos) => Masters::Cluster(ClusterNodes::new(infos, replicas, timeout)),
        };
        Ok(Self { masters, written_through: AtomicBool::new(false) })
    }

    /// What an accepted answer survives now: a replica, or the DB when the last new
    /// reservation had to be written through.
    pub fn guarantee(&self) -> Guarantee {
        if self.written_through.load(Ordering::Relaxed) {
            Guarantee::DbWriteThrough
        } else {
            Guarantee::Replica
        }
    }

    /// Reserves on the product's master over the gate's link to it, then waits for that
    /// master's group `WAIT`. Returns the outcome, the message of a new reservation and
    /// whether replicas vouched for it. A reservation a cluster redirects (`MOVED`: its slot
    /// moved, so the script did not run) is made again once on the master the re-read table
    /// names.
    async fn reserve(
        &self,
        state: &super::state::EngineState,
        reserver: &super::reserve::Reserver,
        request: &super::reserve::ReserveRequest,
    ) -> Result<Reserved, super::state::RedisCallError> {
        let slot = product_slot(request.product_id);
        let mut redirected = false;
        loop {
            let cluster_node;
            let node = match &self.masters {
                Masters::Single(node) => node,
                Masters::Cluster(cluster) => {
                    cluster_node = state.redis_call(cluster.owner(slot)).await?;
                    &*cluster_node
                }
            };
            let link = match state.redis_call(node.link()).await {
                Ok(link) => link,
                Err(e) => {
                    // The master is gone, or not yet back: the table may name another.
                    if let Masters::Cluster(cluster) = &self.masters {
                        cluster.reread().await;
                    }
                    return Err(e);
                }
            };
            let mut conn = link.conn.clone();
            let reserved = super::metrics::timed(
                &super::metrics::get().redis_seconds,
                state.redis_call(reserver.reserve_message(&mut conn, &state.keys, request)),
            )
            .await;
            let (outcome, message) = match reserved {
                Ok(answer) => answer,
                Err(e) => {
                    node.broken(link.generation).await;
                    if let Masters::Cluster(cluster) = &self.masters {
                        cluster.reread().await;
                        let moved = matches!(&e, super::state::RedisCallError::Redis(r)
                            if matches!(r.kind(), redis::ErrorKind::Moved | redis::ErrorKind::Ask));
                        if moved && !redirected {
                            redirected = true;
                            continue;
                        }
                    }
                    return Err(e);
                }
            };
            if message.is_none() {
                return Ok((outcome, None, true));
            }
            let vouched = node.vouch(link.generation).await;
            return Ok((outcome, message, vouched));
        }
    }
}

type Reserved = (super::ReserveOutcome, Option<stockguard_core::reservation::ReservationMessage>, bool);

/// Whether this engine vouches for its reservations, decided once from its configuration and
/// what it finds behind its Redis ([`Vouching::decide`]).
pub enum Vouching {
    Gate(ReplicaGate),
    /// Answered at once, and why.
    AtOnce(Guarantee),
}

impl Vouching {
    /// `acks` as configured: `Auto` looks for replicas behind `redis` and vouches on one when
    /// it finds any, or when it cannot tell (the safe choice); `Off` is logged as the
    /// operator's opt-out.
    pub async fn decide(redis: &RedisLink, acks: ReplicaAcks, timeout: Duration) -> Self {
        let replicas = match acks {
            ReplicaAcks::Off => {
                tracing::warn!(
                    "replica acknowledgements off (--replica-acks 0): an order answered ACCEPTED \
                     may be lost if Redis fails over to a replica that lacks it"
                );
                return Self::AtOnce(Guarantee::NoneOptedOut);
            }
            ReplicaAcks::Exactly(n) => n.get(),
            ReplicaAcks::Auto => match guarantee::replicas_behind(redis).await {
                Ok(0) => {
                    tracing::info!("no replica behind Redis: ACCEPTED is answered at once");
                    return Self::AtOnce(Guarantee::NoReplicas);
                }
                Ok(found) => {
                    tracing::info!(
                        found,
                        "replicas behind Redis: ACCEPTED only once one has the reservation, or the DB"
                    );
                    1
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot tell whether Redis has replicas: vouching for every reservation all the same");
                    1
                }
            },
        };
        match ReplicaGate::on(redis.seeds(), replicas, timeout) {
            Ok(gate) => Self::Gate(gate),
            Err(e) => {
                // Unreachable in practice: the seeds are those the link connected with.
                tracing::error!(error = %e, "the replica gate does not start: ACCEPTED is answered at once");
                Self::AtOnce(Guarantee::NoneOptedOut)
            }
        }
    }

    pub fn gate(&self) -> Option<&ReplicaGate> {
        match self {
            Self::Gate(gate) => Some(gate),
            Self::AtOnce(_) => None,
        }
    }

    pub fn guarantee(&self) -> Guarantee {
        match self {
            Self::Gate(gate) => gate.guarantee(),
            Self::AtOnce(guarantee) => *guarantee,
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

/// Reserves through the gate and answers only once the reservation is on `replicas`
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
    let (outcome, message, vouched) = gate.reserve(state, reserver, request).await?;
    let Some(message) = message else {
        return Ok(outcome);
    };
    gate.written_through.store(!vouched, Ordering::Relaxed);
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
        // Refused. A buyer retrying after a failover to a replica that never had their first
        // reservation (it was written here, not replicated) holds an order under this key
        // already: that is their answer, not "sold out".
        Ok(match first_order(&state.pool, request).await.map_err(super::persist::PersistError::from)? {
            Some(order_no) => super::ReserveOutcome::Replayed { order_no },
            None => super::ReserveOutcome::SoldOut,
        })
    } else {
        Err(VouchedError::Clashed(order_no))
    }
}

/// The order the buyer's idempotency key already holds for the product, if any.
async fn first_order(
    pool: &sqlx::MySqlPool,
    request: &super::reserve::ReserveRequest,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar("SELECT order_no FROM orders WHERE user_id = ? AND product_id = ? AND idempotency_key = ?")
        .bind(request.user_id)
        .bind(request.product_id)
        .bind(request.idempotency_key.as_bytes())
        .fetch_optional(pool)
        .await
}
