//! The drift-confirmation rule, shared by every loop that reads a sale (the sampler behind the
//! window, `drift watch`, the headless watcher, one-off alerts).
//!
//! Every reading is exact (see `reading`), so a non-zero drift in one reading is already
//! real; a drift is nevertheless *confirmed* only when two consecutive readings agree on it
//! (same status, same drift), so that one reading taken while an operator is mid-change
//! (a rewrite applying, a key being rebuilt) does not raise an alarm by itself.

use std::collections::HashMap;

use serde::Serialize;

use super::reading::Reading;
use super::status::DriftStatus;
use crate::product_id::ProductId;

/// A drift two consecutive readings agree on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ConfirmedDrift {
    pub product_id: ProductId,
    pub status: DriftStatus,
    pub drift: Option<i64>,
}

/// Remembers the previous reading of each product and confirms what repeats.
#[derive(Debug, Default)]
pub struct DriftTracker {
    previous: HashMap<ProductId, (DriftStatus, Option<i64>)>,
}

impl DriftTracker {
    pub fn observe(&mut self, readings: &[Reading]) -> Vec<ConfirmedDrift> {
        let mut confirmed = Vec::new();
        for r in readings {
            let now = (r.status, r.drift);
            if r.status != DriftStatus::Ok && self.previous.get(&r.product_id) == Some(&now) {
                confirmed.push(ConfirmedDrift { product_id: r.product_id.clone(), status: r.status, drift: r.drift });
            }
            self.previous.insert(r.product_id.clone(), now);
        }
        confirmed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(product_id: u64, drift: i64) -> Reading {
        Reading {
            redis_stock: Some(10 + drift),
            drift: Some(drift),
            status: DriftStatus::classify(10, 10, 0, Some(10 + drift), 10, false),
            ..Reading::exact(product_id, 10, 0)
        }
    }

    #[test]
    fn a_drift_is_confirmed_by_the_second_agreeing_reading() {
        let mut t = DriftTracker::default();
        assert!(t.observe(&[reading(1, 5)]).is_empty());
        let confirmed = t.observe(&[reading(1, 5)]);
        assert_eq!(
            confirmed,
            vec![ConfirmedDrift { product_id: 1.into(), status: DriftStatus::RedisHigh, drift: Some(5) }]
        );
    }

    #[test]
    fn a_changing_or_vanishing_drift_is_not_confirmed() {
        let mut t = DriftTracker::default();
        t.observe(&[reading(1, 5)]);
        assert!(t.observe(&[reading(1, 3)]).is_empty());
        assert!(t.observe(&[reading(1, 0)]).is_empty());
        assert!(t.observe(&[reading(1, 0)]).is_empty(), "OK is never confirmed as drift");
    }
}
