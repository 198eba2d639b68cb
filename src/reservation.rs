//! The reservation message: what the reserve step appends to `sg:{P}:orders` and the
//! persist consumers turn into an `orders` row. One definition, used by the engine, the
//! sandbox seed and the tests, so the field names cannot drift apart.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservationMessage {
    pub order_no: String,
    pub user_id: u64,
    pub product_id: u64,
    pub qty: i64,
    pub idempotency_key: String,
    /// When Redis accepted the reservation (ms since the epoch).
    pub reserved_at_ms: i64,
    /// The product's sequence number of this reservation (`sg:{P}:seq`).
    pub seq: u64,
}

impl ReservationMessage {
    /// The stream entry's field/value pairs.
    pub fn to_fields(&self) -> [(&'static str, String); 7] {
        [
            ("order_no", self.order_no.clone()),
            ("user_id", self.user_id.to_string()),
            ("product_id", self.product_id.to_string()),
            ("qty", self.qty.to_string()),
            ("idem", self.idempotency_key.clone()),
            ("ts", self.reserved_at_ms.to_string()),
            ("seq", self.seq.to_string()),
        ]
    }

    /// Parses a stream entry's fields; `None` when a field is missing or malformed.
    pub fn from_fields(map: &std::collections::HashMap<String, redis::Value>) -> Option<Self> {
        let text = |name: &str| -> Option<String> { redis::from_redis_value(map.get(name)?).ok() };
        Some(Self {
            order_no: text("order_no")?,
            user_id: text("user_id")?.parse().ok()?,
            product_id: text("product_id")?.parse().ok()?,
            qty: text("qty")?.parse().ok()?,
            idempotency_key: text("idem")?,
            reserved_at_ms: text("ts")?.parse().ok()?,
            seq: text("seq")?.parse().ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_round_trips_through_stream_fields() {
        let msg = ReservationMessage {
            order_no: "A1".into(),
            user_id: 7,
            product_id: 1001,
            qty: 2,
            idempotency_key: "k".into(),
            reserved_at_ms: 1_700_000_000_000,
            seq: 41,
        };
        let map = msg
            .to_fields()
            .into_iter()
            .map(|(k, v)| (k.to_string(), redis::Value::BulkString(v.into_bytes())))
            .collect();
        assert_eq!(ReservationMessage::from_fields(&map), Some(msg));
    }
}
