//! Order numbers: unique across engine instances without coordination.
//!
//! `<product id, hex>-<ms since epoch, hex><instance tag, 4 hex><per-instance counter, 7
//! digits>` (at most 39 characters): the product id lets `GET /orders/{order_no}` find the
//! product's in-flight hash without another lookup; the instance tag is random per process
//! start, the counter is atomic within it. A clash
//! needs two instances with the same random tag issuing the same counter value in the same
//! millisecond; even then the unique index on `orders.order_no` refuses the second.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug)]
pub struct OrderNumbers {
    tag: u16,
    counter: AtomicU64,
}

impl OrderNumbers {
    pub fn new() -> Self {
        Self { tag: rand::random(), counter: AtomicU64::new(0) }
    }

    pub fn next(&self, product_id: u64, now_ms: i64) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) % 10_000_000;
        format!("{product_id:x}-{now_ms:x}{:04x}{n:07}", self.tag)
    }
}

/// The product an engine-issued order number belongs to.
pub fn product_of(order_no: &str) -> Option<u64> {
    let (product, _) = order_no.split_once('-')?;
    u64::from_str_radix(product, 16).ok()
}

impl Default for OrderNumbers {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_numbers_from_one_instance_never_repeat() {
        let gen = OrderNumbers::new();
        let all: std::collections::HashSet<String> = (0..10_000).map(|_| gen.next(42, 1_700_000_000_000)).collect();
        assert_eq!(all.len(), 10_000);
        assert!(all.iter().all(|n| product_of(n) == Some(42)));
    }

    #[test]
    fn the_longest_order_number_fits_the_column() {
        // The last millisecond of the year 9999: 12 hex digits.
        let longest = OrderNumbers::new().next(u64::MAX, 253_402_300_799_999);
        assert!(longest.len() <= 40, "{longest}");
        assert_eq!(product_of(&longest), Some(u64::MAX));
    }
}
