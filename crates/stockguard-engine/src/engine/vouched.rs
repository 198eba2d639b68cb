//! Reserving through the replica gate ([`super::replicas`]): the reservation made on the
//! product's master over the gate's own link, each Redis call under the order path's timeout
//! and breaker ([`EngineState::redis_call`]), and answered "accepted" only once replicas
//! vouched for it or the engine wrote the order to the DB itself, in a batch with the other
//! orders no replica vouched for ([`super::write_through`]).
//!
//! While a master's replicas lag (a group round of its, a read back or a `WAIT`, ran out its
//! timeout), an order does not wait for its own round to fail before it is written: the write
//! starts beside the round (at once, or as soon as the lag begins) and whichever keeps the
//! order first answers the buyer.
//! A stalled replica then costs an order about one DB batch write, and the orders caught at
//! the stall's onset one timeout more, not two.
//!
//! The gate's types know nothing of the engine state; this is where the two meet.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use stockguard_core::redis_link::product_slot;
use stockguard_core::step::Step as _;

use super::replicas::node::Node;
use super::replicas::readback::Proof;
use super::replicas::{Masters, ReplicaGate};
use super::state::{EngineState, RedisCallError};
use super::write_through::{Ahead, WriteThroughError, Written};

impl ReplicaGate {
    /// Reserves on the product's master over the gate's link to it. Returns the outcome, the
    /// message of a new reservation and where it was made, for that master's group round to
    /// vouch for ([`Pending::vouch`]), and whether the product's history was proven whole on
    /// that link before the reservation ([`super::history`]; `Pending::whole`). A reservation
    /// a cluster redirects (`MOVED`: its slot moved, so the script did not run) is made again
    /// once on the master the re-read table names.
    async fn reserve(
        &self,
        state: &EngineState,
        reserver: &super::reserve::Reserver,
        request: &super::reserve::ReserveRequest,
    ) -> Result<Reserved<'_>, RedisCallError> {
        let slot = product_slot(request.product_id);
        let mut redirected = false;
        loop {
            let node = match &self.masters {
                Masters::Single(node) => NodeRef::Single(node),
                Masters::Cluster(cluster) => NodeRef::Cluster(state.redis_call(cluster.owner(slot)).await?),
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
            // Read once the link is in hand: a link that connected afresh counted itself
            // before it was handed out, so a history proven under this count was proven on
            // this master.
            let change = self.changes();
            let whole = state.history_whole_on(&mut conn, request.product_id, change).await;
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
                        let moved = matches!(&e, RedisCallError::Redis(r)
                            if matches!(r.kind(), redis::ErrorKind::Moved | redis::ErrorKind::Ask));
                        if moved && !redirected {
                            redirected = true;
                            continue;
                        }
                    }
                    return Err(e);
                }
            };
            return Ok((outcome, message, Pending { node, generation: link.generation, whole, conn }));
        }
    }
}

type Reserved<'a> = (super::ReserveOutcome, Option<stockguard_core::reservation::ReservationMessage>, Pending<'a>);

/// The master a reservation was made on, as the gate holds it.
enum NodeRef<'a> {
    Single(&'a Node),
    Cluster(Arc<Node>),
}

/// A reservation made, not yet vouched for: the master and the link generation it was made on.
struct Pending<'a> {
    node: NodeRef<'a>,
    generation: u64,
    /// Whether the product's Redis history was proven whole on this link before it reserved.
    whole: bool,
    /// The link's connection: when the history is not whole, the stream backlog a
    /// write-through writes first is read on it.
    conn: redis::aio::MultiplexedConnection,
}

impl std::ops::Deref for NodeRef<'_> {
    type Target = Node;

    fn deref(&self) -> &Node {
        match self {
            Self::Single(node) => node,
            Self::Cluster(node) => node,
        }
    }
}

impl Pending<'_> {
    fn node(&self) -> &Node {
        &self.node
    }

    /// Whether the master's replicas have the reservation `proof` shows, read back from them
    /// or by its group `WAIT`.
    async fn vouch(&self, proof: Proof) -> bool {
        self.node().vouch(self.generation, proof).await
    }
}

/// Where an accepted reservation is kept before its buyer is told.
enum Kept {
    OnReplica,
    Written(Result<Written, WriteThroughError>),
}

/// Why a vouched reservation got no answer.
#[derive(Debug, thiserror::Error)]
pub enum VouchedError {
    #[error(transparent)]
    Redis(#[from] RedisCallError),
    /// No replica had it in time and the DB write failed too: the buyer is told "try again",
    /// never "accepted".
    #[error("no replica acknowledged the reservation and writing it to the DB failed: {0}")]
    WriteThrough(#[from] WriteThroughError),
    /// Written to the DB, but its number is another buyer's order (two engines issued it).
    #[error("order number {0} already belongs to another order")]
    Clashed(String),
}

/// Reserves through the gate and answers only once the reservation is on `replicas`
/// replicas or in the DB, written there with the other orders no replica vouched for
/// ([`super::write_through`]). A DB that refuses it (Redis over-issued) is recorded as the
/// consumer records it (`order_failures`) and the buyer is told sold out; the consumer then
/// finds it failed back and never makes it an order.
///
/// When the product's Redis history is not proven whole on the link it reserves on
/// ([`super::history`]), no replica's word is taken: the order is written to the DB before
/// its answer.
pub async fn reserve_vouched(
    state: &EngineState,
    gate: &ReplicaGate,
    reserver: &super::reserve::Reserver,
    request: &super::reserve::ReserveRequest,
) -> Result<super::ReserveOutcome, VouchedError> {
    let (outcome, message, pending) = gate.reserve(state, reserver, request).await?;
    let Some(message) = message else {
        return Ok(outcome);
    };
    let order_no = message.order_no.clone();
    let proof = Proof {
        key: state.keys.idempotency(request.product_id),
        field: request.idempotency_field(),
        order_no: order_no.clone(),
    };
    let vouch = pending.vouch(proof);
    tokio::pin!(vouch);
    let kept = if !pending.whole {
        tracing::debug!(%order_no, "the product's Redis history is not proven whole: writing the order to the DB");
        Kept::Written(state.write_through.write(message, Ahead::Backlog(Some(pending.conn.clone()))).await)
    } else if pending.node().lagging() {
        // Its replicas lag: the round will likely run out its timeout. The order is written
        // to the DB at once, beside the round, and whichever keeps it first answers.
        race(vouch, state.write_through.write(message, Ahead::Nothing)).await
    } else {
        enum First {
            Vouched(bool),
            LagBegan,
        }
        // And should another round of its master run out meanwhile (this order's own one is
        // then likely stuck too), the write starts then, not once its own round gave up.
        let first = tokio::select! {
            biased;
            vouched = &mut vouch => First::Vouched(vouched),
            () = pending.node().lag_begins() => First::LagBegan,
        };
        match first {
            First::Vouched(true) => Kept::OnReplica,
            First::Vouched(false) => {
                tracing::debug!(%order_no, "no replica acknowledged in time: writing the order to the DB");
                Kept::Written(state.write_through.write(message, Ahead::Nothing).await)
            }
            First::LagBegan => race(vouch, state.write_through.write(message, Ahead::Nothing)).await,
        }
    };
    let written = match kept {
        Kept::OnReplica => {
            gate.written_through.store(false, Ordering::Relaxed);
            return Ok(outcome);
        }
        Kept::Written(written) => written,
    };
    gate.written_through.store(true, Ordering::Relaxed);
    answer_written(state, request, outcome, order_no, written).await
}

/// Reserves in Redis without a replica gate, and answers only once the order is in the DB:
/// for a product whose Redis history is not proven whole ([`super::history`]).
pub async fn reserve_written_through(
    state: &EngineState,
    reserver: &super::reserve::Reserver,
    request: &super::reserve::ReserveRequest,
) -> Result<super::ReserveOutcome, VouchedError> {
    let mut redis = state.redis.clone();
    let reserve = reserver.reserve_message(&mut redis, &state.keys, request);
    let (outcome, message) =
        super::metrics::timed(&super::metrics::get().redis_seconds, state.redis_call(reserve)).await?;
    let Some(message) = message else {
        return Ok(outcome);
    };
    let order_no = message.order_no.clone();
    let written = state.write_through.write(message, Ahead::Backlog(None)).await;
    answer_written(state, request, outcome, order_no, written).await
}

/// The answer to a new reservation (`outcome`, numbered `order_no`) once the engine wrote it
/// to the DB: accepted when the DB has it; when the DB refused it, the buyer's first order
/// under the same key if there is one, else sold out.
async fn answer_written(
    state: &EngineState,
    request: &super::reserve::ReserveRequest,
    outcome: super::ReserveOutcome,
    order_no: String,
    written: Result<Written, WriteThroughError>,
) -> Result<super::ReserveOutcome, VouchedError> {
    super::metrics::get().written_through.inc();
    match written? {
        Written::Stored => Ok(outcome),
        // Refused. A buyer retrying after a failover to a replica that never had their first
        // reservation (it was written here, not replicated) holds an order under this key
        // already: that is their answer, not "sold out".
        Written::Refused => Ok(
            match first_order(&state.pool, request)
                .await
                .step("looking up the buyer's first order")
                .map_err(WriteThroughError::from)?
            {
                Some(order_no) => super::ReserveOutcome::Replayed { order_no },
                None => super::ReserveOutcome::SoldOut,
            },
        ),
        Written::Clashed => Err(VouchedError::Clashed(order_no)),
    }
}

/// The group round (`vouch`: a read back or a `WAIT`) and the order's write to the DB, side
/// by side: kept on a replica when the round vouches before the write ends (the write still
/// goes on, and is harmless: the consumer's write is idempotent), else what the write did. A
/// write that failed leaves the round to answer.
async fn race(
    mut vouch: std::pin::Pin<&mut impl std::future::Future<Output = bool>>,
    write: impl std::future::Future<Output = Result<Written, WriteThroughError>>,
) -> Kept {
    tokio::pin!(write);
    enum First {
        Written(Result<Written, WriteThroughError>),
        Vouched(bool),
    }
    // `biased`: the write is polled first, so it is queued before anything else can end.
    let first = tokio::select! {
        biased;
        written = &mut write => First::Written(written),
        vouched = &mut vouch => First::Vouched(vouched),
    };
    match first {
        First::Written(Err(e)) => {
            if vouch.await {
                Kept::OnReplica
            } else {
                Kept::Written(Err(e))
            }
        }
        First::Written(written) => Kept::Written(written),
        First::Vouched(true) => Kept::OnReplica,
        First::Vouched(false) => Kept::Written(write.await),
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
