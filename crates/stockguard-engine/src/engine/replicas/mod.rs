//! On a replica, or in the DB, before "accepted": what makes an accepted order outlive a
//! Redis failover.
//!
//! Redis replicates asynchronously. A master that dies takes with it the reservations its
//! replica had not yet received, and with them the stream messages that were the only record
//! of orders already answered "accepted" (the `redis-failover-loss` drill lost 6 this way).
//! With a replica gate, a new reservation is answered "accepted" only once `n` replicas have
//! it (read back from them, [`readback`], or where the gate cannot reach them, `WAIT n
//! timeout`), or, when they do not say so in time, once the engine has written the order to
//! the DB itself with the consumer's own idempotent write ([`super::persist::write_batch`]).
//! Either way the order survives the master; what the promoted replica then lacks is a
//! deduction, which the reading sees as `REDIS_HIGH` and a fenced rewrite repairs.
//!
//! The gate is on by default: an engine that finds replicas behind its Redis vouches for
//! every new reservation ([`guarantee`]); `--replica-acks 0` is the logged opt-out.
//!
//! Reservations are made on connections of the gate's own, one per master ([`node`]), and
//! vouched for in groups (group commit): one read of the replicas, or one `WAIT` per master
//! for every reservation answered on it before the `WAIT` was sent. On Redis Cluster the gate
//! finds the product's master in the node table it reads itself ([`cluster`], [`topology`]):
//! a lagging replica delays only its own master's orders (at most about one timeout each, not
//! a queue of them: see [`node`]; and while they lag, orders are written to the DB beside
//! their round: see [`super::vouched`]).
//!
//! These are the gate's own types, and they know nothing of the engine's state: a
//! reservation made through the gate, under the order path's timeout and breaker, is
//! [`super::vouched`]; the orders no replica vouched for in time are written to the DB
//! together, a batch per product, by [`super::write_through`].

pub mod cluster;
pub mod guarantee;
pub mod node;
pub mod readback;
pub mod topology;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redis::IntoConnectionInfo as _;
use stockguard_core::redis_link::{seeds, RedisLink};

use cluster::ClusterNodes;
use guarantee::{Guarantee, ReplicaAcks};
use node::Node;

/// How long a replica may take to acknowledge before the order is written to the DB instead
/// (`engine serve --replica-ack-timeout-ms`).
pub const DEFAULT_ACK_TIMEOUT: Duration = Duration::from_millis(50);

pub(super) enum Masters {
    Single(Node),
    Cluster(ClusterNodes),
}

/// The replica acknowledgement gate of one engine instance.
pub struct ReplicaGate {
    pub(super) masters: Masters,
    /// Whether the last new reservation was written to the DB (no replica in time).
    pub(super) written_through: AtomicBool,
    /// How many times a master link connected afresh ([`Self::changes`]).
    changes: Arc<AtomicU64>,
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
        let changes = Arc::new(AtomicU64::new(0));
        let masters = match <[_; 1]>::try_from(infos) {
            Ok([one]) => Masters::Single(Node::start(one, replicas, timeout, changes.clone())?),
            Err(infos) if infos.is_empty() => {
                return Err(redis::RedisError::from((redis::ErrorKind::InvalidClientConfig, "no Redis to vouch on")))
            }
            Err(infos) => Masters::Cluster(ClusterNodes::new(infos, replicas, timeout, changes.clone())),
        };
        Ok(Self { masters, written_through: AtomicBool::new(false), changes })
    }

    /// How many times one of the gate's master links connected where it may reach another
    /// master than before: its first connection, and any after a break (a failover, a new
    /// master of a cluster's slot). A product's Redis history checked under an older count
    /// is checked again ([`super::history`]).
    pub fn changes(&self) -> u64 {
        self.changes.load(Ordering::Relaxed)
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
}

/// How to reach the node at `host:port`: `info`'s credentials and database, that address (a
/// cluster's other masters, a master's replicas).
fn reach(info: &redis::ConnectionInfo, host: &str, port: u16) -> redis::ConnectionInfo {
    let mut info = info.clone();
    info.addr = match info.addr {
        redis::ConnectionAddr::TcpTls { insecure, tls_params, .. } => {
            redis::ConnectionAddr::TcpTls { host: host.to_string(), port, insecure, tls_params }
        }
        _ => redis::ConnectionAddr::Tcp(host.to_string(), port),
    };
    info
}

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
