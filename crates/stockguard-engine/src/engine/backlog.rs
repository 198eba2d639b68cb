//! A product's stream backlog: the reservations its stream still holds, which the engine
//! writes to the DB ahead of the orders it writes through ([`super::write_through`]).
//!
//! The stream holds only what is still to be persisted (a consumer deletes what it
//! acknowledged: [`super::persist::confirm`]), and every entry in it may be an order a buyer
//! was already told is ACCEPTED: vouched for by a replica, or answered at once. While Redis
//! and the DB describe one history, the DB has a unit for each. After a failover to a replica
//! that lacked written-through deductions, Redis holds units the DB has already sold, and the
//! DB can no longer take every order Redis issues: whichever reaches the DB last is refused.
//! A written-through order is refused before its buyer is answered (SOLD_OUT, a fair
//! answer); an accepted order waiting in the stream would be refused after ACCEPTED, a promise
//! broken. So while a product's history is not proven whole, a write-through never jumps the
//! queue: the backlog goes first (issue 54). `XRANGE` with an exclusive start needs Redis 6.2
//! or later.

use redis::Value;
use stockguard_core::keys::Keys;

use super::persist::StreamMessage;

/// Most entries one `XRANGE` reads.
const PAGE: usize = 500;

/// Most entries a write-through reads ahead of its own orders. Past it the write-through
/// fails (its buyers are told to try again, never ACCEPTED): a consumer that far behind is
/// better caught up than overtaken.
pub const MAX_BACKLOG: usize = 50_000;

/// Why a product's backlog could not be read whole.
#[derive(Debug, thiserror::Error)]
pub enum BacklogError {
    #[error("reading the stream backlog of product {product_id} (XRANGE): {source}")]
    Redis {
        product_id: u64,
        #[source]
        source: redis::RedisError,
    },
    #[error("product {product_id}'s stream holds more than {MAX_BACKLOG} reservations not yet persisted: its consumers are far behind, so no order is written ahead of them")]
    TooDeep { product_id: u64 },
    #[error("reading the stream backlog of product {product_id} took more than {after:?}")]
    TimedOut { product_id: u64, after: std::time::Duration },
}

/// Every reservation `product_id`'s stream holds, oldest first (malformed entries are left
/// out: the consumer logs and keeps them).
pub async fn read<C>(redis: &mut C, keys: &Keys, product_id: u64) -> Result<Vec<StreamMessage>, BacklogError>
where
    C: redis::aio::ConnectionLike + Send,
{
    let stream = keys.orders_stream(product_id);
    let mut held = Vec::new();
    let mut start = "-".to_string();
    loop {
        let page: Value = redis::cmd("XRANGE")
            .arg(&stream)
            .arg(&start)
            .arg("+")
            .arg("COUNT")
            .arg(PAGE)
            .query_async(redis)
            .await
            .map_err(|source| BacklogError::Redis { product_id, source })?;
        let entries = match page {
            Value::Array(entries) => entries,
            _ => Vec::new(),
        };
        let Some(last) = entries.last().and_then(entry_id) else {
            return Ok(held);
        };
        let full = entries.len() == PAGE;
        held.extend(entries.iter().filter_map(super::consumer::parse_entry));
        if !full {
            return Ok(held);
        }
        if held.len() > MAX_BACKLOG {
            return Err(BacklogError::TooDeep { product_id });
        }
        // Exclusive: the next page starts after this one's last entry (Redis 6.2 and later).
        start = format!("({last}");
    }
}

fn entry_id(entry: &Value) -> Option<String> {
    match entry {
        Value::Array(parts) => match parts.first() {
            Some(Value::BulkString(id)) => Some(String::from_utf8_lossy(id).into_owned()),
            _ => None,
        },
        _ => None,
    }
}
