//! The reserve step: one Lua script, loaded once and called by SHA (`redis::Script` sends
//! EVALSHA and loads the script only when the server does not know it).

use redis::Script;

use super::order_no::{InstanceTag, OrderNumbers};
use stockguard_core::keys::Keys;
use stockguard_core::reservation::{self, ReservationMessage};

/// A buyer's request for units of one product.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReserveRequest {
    pub user_id: u64,
    pub product_id: u64,
    pub qty: i64,
    pub idempotency_key: String,
    pub per_user_limit: i64,
}

impl ReserveRequest {
    /// The field of the product's idempotency hash that holds this request's order number.
    pub fn idempotency_field(&self) -> String {
        format!("{}:{}", self.user_id, self.idempotency_key)
    }
}

/// What Redis answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReserveOutcome {
    Reserved {
        order_no: String,
    },
    /// The same (user, idempotency key) was reserved before: its order number, nothing new.
    Replayed {
        order_no: String,
    },
    SoldOut,
    /// The stock key is absent: not warmed up, evicted or flushed. Not a sell-out.
    NotReady,
    LimitReached,
}

/// The script's answer when the order number is already in flight.
const NUMBER_IN_USE: i64 = 3;

/// Holds the loaded script and the order-number generator.
#[derive(Debug)]
pub struct Reserver {
    script: Script,
    numbers: OrderNumbers,
}

impl Reserver {
    /// A reserver numbering its orders with `tag`, which the DB handed this instance
    /// ([`InstanceTag::claim`]).
    pub fn new(tag: InstanceTag) -> Self {
        Self { script: Script::new(include_str!("reserve.lua")), numbers: OrderNumbers::new(tag) }
    }

    /// A fresh order number for the product (the degrade path numbers its orders the same way).
    pub fn next_order_no(&self, product_id: u64) -> String {
        self.numbers.next(product_id, chrono::Utc::now().timestamp_millis())
    }

    /// The script's SHA1, as `redis-benchmark EVALSHA` needs it.
    pub fn sha() -> String {
        Script::new(include_str!("reserve.lua")).get_hash().to_string()
    }

    /// The script's source.
    pub fn source() -> &'static str {
        include_str!("reserve.lua")
    }

    pub async fn reserve<C>(
        &self,
        conn: &mut C,
        keys: &Keys,
        req: &ReserveRequest,
    ) -> redis::RedisResult<ReserveOutcome>
    where
        C: redis::aio::ConnectionLike + Send,
    {
        Ok(self.reserve_message(conn, keys, req).await?.0)
    }

    /// [`Self::reserve`], and for a new reservation the message the script appended: what an
    /// engine writes to the DB itself when no replica acknowledged the reservation in time
    /// ([`super::replicas`]).
    #[tracing::instrument(level = "debug", name = "reserve", skip_all, fields(product_id = req.product_id))]
    pub async fn reserve_message<C>(
        &self,
        conn: &mut C,
        keys: &Keys,
        req: &ReserveRequest,
    ) -> redis::RedisResult<(ReserveOutcome, Option<ReservationMessage>)>
    where
        C: redis::aio::ConnectionLike + Send,
    {
        self.reserve_inner(conn, keys, req).await
    }

    async fn reserve_inner<C>(
        &self,
        conn: &mut C,
        keys: &Keys,
        req: &ReserveRequest,
    ) -> redis::RedisResult<(ReserveOutcome, Option<ReservationMessage>)>
    where
        C: redis::aio::ConnectionLike + Send,
    {
        // A number another reservation holds in flight is refused (code 3); a fresh one
        // cannot clash again short of a second engine with our tag, so one retry is enough.
        for _ in 0..2 {
            let Answer { code, order_no: returned, seq, epoch, at_ms } = self.invoke(conn, keys, req).await?;
            let outcome = match code {
                1 => {
                    let message = ReservationMessage {
                        order_no: returned.clone(),
                        user_id: req.user_id,
                        product_id: req.product_id,
                        qty: req.qty,
                        idempotency_key: req.idempotency_key.clone(),
                        reserved_at_ms: at_ms,
                        seq,
                        epoch: epoch.parse().unwrap_or(0),
                    };
                    (ReserveOutcome::Reserved { order_no: returned }, Some(message))
                }
                2 => (ReserveOutcome::Replayed { order_no: returned }, None),
                0 => (ReserveOutcome::SoldOut, None),
                -1 => (ReserveOutcome::NotReady, None),
                -2 => (ReserveOutcome::LimitReached, None),
                NUMBER_IN_USE => {
                    tracing::warn!(
                        product_id = req.product_id,
                        "order number already in flight; retrying with a new one"
                    );
                    continue;
                }
                other => {
                    return Err(redis::RedisError::from((
                        redis::ErrorKind::TypeError,
                        "unexpected reserve script answer",
                        other.to_string(),
                    )))
                }
            };
            return Ok(outcome);
        }
        Err(redis::RedisError::from((redis::ErrorKind::ResponseError, "order numbers in use twice in a row")))
    }

    /// One call of the script with a fresh order number.
    async fn invoke<C>(&self, conn: &mut C, keys: &Keys, req: &ReserveRequest) -> redis::RedisResult<Answer>
    where
        C: redis::aio::ConnectionLike + Send,
    {
        let now_ms = chrono::Utc::now().timestamp_millis();
        let order_no = self.numbers.next(req.product_id, now_ms);
        let p = req.product_id;
        let mut call = self.script.key(keys.stock(p));
        call.key(keys.inflight(p))
            .key(keys.buyers(p))
            .key(keys.orders_stream(p))
            .key(keys.idempotency(p))
            .key(keys.seq(p))
            .key(keys.epoch(p))
            .arg(&order_no)
            .arg(req.user_id)
            .arg(req.qty)
            .arg(req.per_user_limit)
            .arg(req.idempotency_field())
            .arg(reservation::body(&order_no, req.user_id, p, req.qty, now_ms, &req.idempotency_key));
        let (code, order_no, seq, epoch) = call.invoke_async(conn).await?;
        Ok(Answer { code, order_no, seq, epoch, at_ms: now_ms })
    }
}

/// The script's answer: `{code, order_no, seq, epoch}`, and when the message says it was made.
struct Answer {
    code: i64,
    order_no: String,
    seq: u64,
    /// A string: epochs need not fit the 53 bits a Lua number holds exactly.
    epoch: String,
    at_ms: i64,
}
