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
    /// The Redis history the sequence number belongs to (`sg:{P}:epoch`, field `e`; 0 when
    /// the product's keys were warmed without one). A rebuild of the product's Redis stock
    /// starts a new epoch, so sequence numbers of a lost history are never compared with
    /// those of the current one.
    pub epoch: u64,
}

/// The stream field holding the reservation's epoch; absent means epoch 0.
pub const EPOCH_FIELD: &str = "e";

/// The stream field holding a reservation in the compact form the reserve script writes:
/// `"<order_no> <user_id> <product_id> <qty> <reserved at, ms> <idempotency key>"`, beside
/// the field `seq`. One value instead of six named ones: fewer strings for Redis to append
/// and send back in every `XREADGROUP` reply, and for the consumers to parse. The
/// idempotency key comes last because it may itself hold spaces; order numbers never do.
pub const BODY_FIELD: &str = "r";

/// The `r` value of a reservation (see [`BODY_FIELD`]).
pub fn body(
    order_no: &str,
    user_id: u64,
    product_id: u64,
    qty: i64,
    reserved_at_ms: i64,
    idempotency_key: &str,
) -> String {
    format!("{order_no} {user_id} {product_id} {qty} {reserved_at_ms} {idempotency_key}")
}

impl ReservationMessage {
    /// The stream entry's field/value pairs, as the reserve script writes them.
    pub fn to_fields(&self) -> [(&'static str, String); 3] {
        [
            (
                BODY_FIELD,
                body(
                    &self.order_no,
                    self.user_id,
                    self.product_id,
                    self.qty,
                    self.reserved_at_ms,
                    &self.idempotency_key,
                ),
            ),
            ("seq", self.seq.to_string()),
            (EPOCH_FIELD, self.epoch.to_string()),
        ]
    }

    /// Parses a stream entry's field/value pairs as Redis sends them, borrowing: the
    /// consumers read 200 entries at a time and need no map of owned strings per entry.
    /// Reads the compact form ([`BODY_FIELD`]) and the named fields (`order_no`, `user_id`,
    /// `product_id`, `qty`, `idem`, `ts`) that engines before it wrote, so messages left
    /// pending across an upgrade are still persisted. `None` when a field is missing or
    /// malformed.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) -> Option<Self> {
        fn text(v: &[u8]) -> Option<&str> {
            std::str::from_utf8(v).ok()
        }
        fn number<T: std::str::FromStr>(v: &[u8]) -> Option<T> {
            text(v)?.parse().ok()
        }
        let (mut order_no, mut user_id, mut product_id, mut qty, mut idem, mut ts, mut seq) =
            (None, None, None, None, None, None, None);
        let mut epoch = 0;
        for (name, value) in pairs {
            match name {
                n if n == BODY_FIELD.as_bytes() => {
                    let mut parts = text(value)?.splitn(6, ' ');
                    let mut next = || parts.next().filter(|p| !p.is_empty());
                    order_no = Some(next()?.to_owned());
                    user_id = Some(next()?.parse().ok()?);
                    product_id = Some(next()?.parse().ok()?);
                    qty = Some(next()?.parse().ok()?);
                    ts = Some(next()?.parse().ok()?);
                    idem = Some(next()?.to_owned());
                }
                b"seq" => seq = Some(number(value)?),
                n if n == EPOCH_FIELD.as_bytes() => epoch = number(value)?,
                b"order_no" => order_no = Some(text(value)?.to_owned()),
                b"user_id" => user_id = Some(number(value)?),
                b"product_id" => product_id = Some(number(value)?),
                b"qty" => qty = Some(number(value)?),
                b"idem" => idem = Some(text(value)?.to_owned()),
                b"ts" => ts = Some(number(value)?),
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
            epoch,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(idempotency_key: &str) -> ReservationMessage {
        ReservationMessage {
            order_no: "A1".into(),
            user_id: 7,
            product_id: 1001,
            qty: 2,
            idempotency_key: idempotency_key.into(),
            reserved_at_ms: 1_700_000_000_000,
            seq: 41,
            epoch: 0,
        }
    }

    fn read(fields: &[(&str, &str)]) -> Option<ReservationMessage> {
        ReservationMessage::from_pairs(fields.iter().map(|(k, v)| (k.as_bytes(), v.as_bytes())))
    }

    fn round_trip(msg: &ReservationMessage) -> Option<ReservationMessage> {
        let fields = msg.to_fields();
        read(&fields.iter().map(|(k, v)| (*k, v.as_str())).collect::<Vec<_>>())
    }

    #[test]
    fn a_message_round_trips_through_stream_fields() {
        assert_eq!(round_trip(&message("k")), Some(message("k")));
    }

    #[test]
    fn an_idempotency_key_with_spaces_comes_back_whole() {
        assert_eq!(round_trip(&message(" pay  now ")), Some(message(" pay  now ")));
    }

    #[test]
    fn a_compact_message_missing_a_part_or_with_a_bad_number_is_refused() {
        assert_eq!(read(&[("r", "A1 7 1001 2 1700000000000 k"), ("seq", "41")]), Some(message("k")));
        assert_eq!(read(&[("r", "A1 7 1001 2 1700000000000 k")]), None, "no seq");
        assert_eq!(read(&[("r", "A1 7 1001 2 1700000000000"), ("seq", "41")]), None, "no key");
        assert_eq!(read(&[("r", "A1 7 1001 two 1700000000000 k"), ("seq", "41")]), None, "qty");
        assert_eq!(read(&[("r", "A1  1001 2 1700000000000 k"), ("seq", "41")]), None, "empty user");
    }

    #[test]
    fn the_epoch_round_trips_and_a_message_without_one_is_of_epoch_zero() {
        let msg = ReservationMessage { epoch: 12, ..message("k") };
        assert_eq!(round_trip(&msg), Some(msg));
        assert_eq!(read(&[("r", "A1 7 1001 2 1700000000000 k"), ("seq", "41")]).map(|m| m.epoch), Some(0));
        assert_eq!(read(&[("r", "A1 7 1001 2 1700000000000 k"), ("seq", "41"), ("e", "x")]), None, "bad epoch");
    }

    #[test]
    fn a_message_in_the_named_fields_of_older_engines_is_still_read() {
        let whole = [
            ("order_no", "A1"),
            ("user_id", "7"),
            ("product_id", "1001"),
            ("qty", "2"),
            ("idem", "k"),
            ("ts", "1700000000000"),
            ("seq", "41"),
        ];
        assert_eq!(read(&whole), Some(message("k")));
        let without_seq: Vec<_> = whole.iter().copied().filter(|(k, _)| *k != "seq").collect();
        assert_eq!(read(&without_seq), None);
        let bad_qty: Vec<_> = whole.iter().map(|&(k, v)| if k == "qty" { (k, "two") } else { (k, v) }).collect();
        assert_eq!(read(&bad_qty), None);
    }
}
