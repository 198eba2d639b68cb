//! Order numbers: unique across engine instances without coordination.
//!
//! `<ms since epoch, 13 digits><instance tag, 4 hex><per-instance counter, 8 digits>`:
//! the instance tag is random per process start, the counter is atomic within it. A clash
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

    pub fn next(&self, now_ms: i64) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) % 100_000_000;
        format!("{now_ms:013}{:04x}{n:08}", self.tag)
    }
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
        let all: std::collections::HashSet<String> = (0..10_000).map(|_| gen.next(1_700_000_000_000)).collect();
        assert_eq!(all.len(), 10_000);
        assert!(all.iter().all(|n| n.len() == 25));
    }
}
