//! Order numbers: unique across engine instances.
//!
//! `<product id, hex>-<ms since epoch, hex><instance tag, 6 hex><per-instance counter, 5
//! hex>` (at most 40 characters, the width of `orders.order_no`): the product id lets
//! `GET /orders/{order_no}` find the product's in-flight hash without another lookup. The
//! instance tag is handed out by the DB when the engine starts (an `engine_instances` row's
//! id, wrapped to 24 bits), so two running instances never share one; the counter is atomic
//! within the instance and wraps after 2^20 numbers, so a repeat needs one instance to issue
//! a million numbers in one millisecond. The fields after the millisecond have a fixed width,
//! so no two (ms, tag, counter) triples print alike.
//!
//! Belt and braces: the reserve script refuses a number still in flight, and persist fails a
//! number already held by another buyer's order back to that buyer (`ORDER_NO_CLASH`).

use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::MySqlPool;

/// Tags wrap at 24 bits (6 hex digits).
const TAG_MODULUS: u64 = 1 << 24;
/// The counter field holds 5 hex digits.
const COUNTER_MODULUS: u64 = 1 << 20;

/// An engine instance's tag in its order numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InstanceTag(u32);

impl InstanceTag {
    /// Registers an engine start in `engine_instances` and takes its id as the tag.
    pub async fn claim(pool: &MySqlPool, instance_id: &str) -> Result<Self, sqlx::Error> {
        let id = sqlx::query("INSERT INTO engine_instances (instance_id) VALUES (?)")
            .bind(instance_id)
            .execute(pool)
            .await?
            .last_insert_id();
        Ok(Self::from_id(id))
    }

    /// The tag of an `engine_instances` id: wrapped to the field's width.
    pub fn from_id(id: u64) -> Self {
        Self((id % TAG_MODULUS) as u32)
    }
}

#[derive(Debug)]
pub struct OrderNumbers {
    tag: InstanceTag,
    counter: AtomicU64,
}

impl OrderNumbers {
    pub fn new(tag: InstanceTag) -> Self {
        Self { tag, counter: AtomicU64::new(0) }
    }

    pub fn next(&self, product_id: u64, now_ms: i64) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) % COUNTER_MODULUS;
        format!("{product_id:x}-{now_ms:x}{:06x}{n:05x}", self.tag.0)
    }
}

/// The product an engine-issued order number belongs to.
pub fn product_of(order_no: &str) -> Option<u64> {
    let (product, _) = order_no.split_once('-')?;
    u64::from_str_radix(product, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_numbers_from_one_instance_never_repeat() {
        let gen = OrderNumbers::new(InstanceTag::from_id(7));
        let all: std::collections::HashSet<String> = (0..10_000).map(|_| gen.next(42, 1_700_000_000_000)).collect();
        assert_eq!(all.len(), 10_000);
        assert!(all.iter().all(|n| product_of(n) == Some(42)));
    }

    #[test]
    fn instances_with_different_tags_never_issue_the_same_number() {
        let (a, b) = (OrderNumbers::new(InstanceTag::from_id(1)), OrderNumbers::new(InstanceTag::from_id(2)));
        assert_ne!(a.next(42, 1_700_000_000_000), b.next(42, 1_700_000_000_000));
    }

    #[test]
    fn the_longest_order_number_fits_the_column() {
        // The last millisecond of the year 9999: 12 hex digits; the largest tag and product.
        let longest = OrderNumbers::new(InstanceTag::from_id(TAG_MODULUS - 1)).next(u64::MAX, 253_402_300_799_999);
        assert!(longest.len() <= 40, "{longest}");
        assert_eq!(product_of(&longest), Some(u64::MAX));
    }
}
