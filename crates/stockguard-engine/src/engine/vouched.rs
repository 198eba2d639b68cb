//! Reserving through the replica gate ([`super::replicas`]): the reservation made on the
//! product's master over the gate's own link, each Redis call under the order path's timeout
//! and breaker ([`EngineState::redis_call`]), and answered "accepted" only once replicas
//! vouched for it or the engine wrote the order to the DB itself, in a batch with the other
//! orders no replica vouched for ([`super::write_through`]).
//!
//! The gate's types know nothing of the engine state; this is where the two meet.

use std::sync::atomic::Ordering;

use stockguard_core::redis_link::product_slot;

use super::persist::PersistError;
use super::replicas::{Masters, ReplicaGate};
use super::state::{EngineState, RedisCallError};
use super::write_through::{WriteThroughError, Written};

impl ReplicaGate {
    /// Reserves on the product's master over the gate's link to it, then waits for that
    /// master's group `WAIT`. Returns the outcome, the message of a new reservation and
    /// whether replicas vouched for it. A reservation a cluster redirects (`MOVED`: its slot
    /// moved, so the script did not run) is made again once on the master the re-read table
    /// names.
    async fn reserve(
        &self,
        state: &EngineState,
        reserver: &super::reserve::Reserver,
        request: &super::reserve::ReserveRequest,
    ) -> Result<Reserved, RedisCallError> {
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
            if message.is_none() {
                return Ok((outcome, None, true));
            }
            let vouched = node.vouch(link.generation).await;
            return Ok((outcome, message, vouched));
        }
    }
}

type Reserved = (super::ReserveOutcome, Option<stockguard_core::reservation::ReservationMessage>, bool);

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
pub async fn reserve_vouched(
    state: &EngineState,
    gate: &ReplicaGate,
    reserver: &super::reserve::Reserver,
    request: &super::reserve::ReserveRequest,
) -> Result<super::ReserveOutcome, VouchedError> {
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
    match state.write_through.write(message).await? {
        Written::Stored => Ok(outcome),
        // Refused. A buyer retrying after a failover to a replica that never had their first
        // reservation (it was written here, not replicated) holds an order under this key
        // already: that is their answer, not "sold out".
        Written::Refused => Ok(
            match first_order(&state.pool, request)
                .await
                .map_err(PersistError::from)
                .map_err(WriteThroughError::from)?
            {
                Some(order_no) => super::ReserveOutcome::Replayed { order_no },
                None => super::ReserveOutcome::SoldOut,
            },
        ),
        Written::Clashed => Err(VouchedError::Clashed(order_no)),
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
