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

    /// Parses a stream entry's field/value pairs as Redis sends them, borrowing: the
    /// consumers read 200 entries at a time and need no map of owned strings per entry.
    /// `None` when a field is missing or malformed.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) -> Option<Self> {
        fn text(v: &[u8]) -> Option<&str> {
            std::str::from_utf8(v).ok()
        }
        fn number<T: std::str::FromStr>(v: &[u8]) -> Option<T> {
            text(v)?.parse().ok()
        }
        let (mut order_no, mut user_id, mut product_id, mut qty, mut idem, mut ts, mut seq) =
            (None, None, None, None, None, None, None);
        for (name, value) in pairs {
            match name {
                b"order_no" => order_no = Some(text(value)?.to_owned()),
                b"user_id" => user_id = Some(number(value)?),
                b"product_id" => product_id = Some(number(value)?),
                b"qty" => qty = Some(number(value)?),
                b"idem" => idem = Some(text(value)?.to_owned()),
                b"ts" => ts = Some(number(value)?),
                b"seq" => seq = Some(number(value)?),
                // A field added by a newer writer is not this reader's business.
                _ => {}
            }
        }
        Some(Self {
            order_no: order_no?,
            user_id: user_id?,
            product_id: product_id?,
            qty: qty?,
            idempotency_key: idem?,
            reserved_at_ms: ts?,
            seq: seq?,
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
        let fields = msg.to_fields();
        let pairs = fields.iter().map(|(k, v)| (k.as_bytes(), v.as_bytes()));
        assert_eq!(ReservationMessage::from_pairs(pairs), Some(msg));
    }

    #[test]
    fn a_message_missing_a_field_or_with_a_bad_number_is_refused() {
        let whole: Vec<(&[u8], &[u8])> = vec![
            (b"order_no", b"A1"),
            (b"user_id", b"7"),
            (b"product_id", b"1001"),
            (b"qty", b"2"),
            (b"idem", b"k"),
            (b"ts", b"1700000000000"),
            (b"seq", b"41"),
        ];
        assert!(ReservationMessage::from_pairs(whole.iter().copied()).is_some());
        assert_eq!(ReservationMessage::from_pairs(whole.iter().copied().filter(|(k, _)| *k != b"seq")), None);
        let bad_qty = whole.iter().map(|&(k, v)| if k == b"qty" { (k, &b"two"[..]) } else { (k, v) });
        assert_eq!(ReservationMessage::from_pairs(bad_qty), None);
    }
}
