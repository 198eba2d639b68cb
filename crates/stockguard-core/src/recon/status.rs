//! Drift statuses, most severe first, and the rule that assigns one to a reading.

use serde::{Deserialize, Serialize};

/// The status of one product's stock, as the contract names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum DriftStatus {
    Ok,
    /// Over an adapter: the product moved between the reading's two passes, or what waits in
    /// flight names no product, so its drift is no verdict yet (`crate::adapter`).
    Unsettled,
    RedisHigh,
    RedisLow,
    KeyMissing,
    /// Over an adapter: the product's stock key holds what is not a whole number (`SET stock:2
    /// abc`), so the sale cannot sell it from Redis and no drift can be read; the reading names
    /// the key and the value (`AdapterReading::unreadable`). The other products read.
    KeyUnreadable,
    /// Redis went back in time: the DB holds reservations Redis has no record of issuing
    /// (restart without persistence, flush, eviction, failover to a lagging replica). The
    /// reading's cut cannot be trusted, so its drift is not a verdict; rebuild the product's
    /// Redis stock (the fenced rewrite does, under a new epoch).
    HistoryLost,
    LedgerMismatch,
    Oversold,
}

impl DriftStatus {
    /// Higher is worse; the board sorts by it.
    pub fn severity(self) -> u8 {
        match self {
            Self::Ok => 0,
            Self::Unsettled => 0,
            Self::RedisLow => 1,
            Self::RedisHigh => 2,
            Self::KeyMissing => 3,
            Self::KeyUnreadable => 3,
            Self::HistoryLost => 4,
            Self::LedgerMismatch => 5,
            Self::Oversold => 6,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "OK",
            Self::Unsettled => "UNSETTLED",
            Self::RedisHigh => "REDIS_HIGH",
            Self::RedisLow => "REDIS_LOW",
            Self::KeyMissing => "KEY_MISSING",
            Self::KeyUnreadable => "KEY_UNREADABLE",
            Self::HistoryLost => "HISTORY_LOST",
            Self::LedgerMismatch => "LEDGER_MISMATCH",
            Self::Oversold => "OVERSOLD",
        }
    }

    /// Classifies one product. The DB-side incidents come first: an oversell or a broken
    /// ledger matters more than what Redis says, and makes Redis drift meaningless. Then a
    /// cut that cannot be trusted (`history_lost`): its drift is no verdict either way.
    pub fn classify(
        initial_stock: i64,
        db_stock: i64,
        live_orders_qty: i64,
        redis_stock: Option<i64>,
        expected_redis: i64,
        history_lost: bool,
    ) -> Self {
        if live_orders_qty > initial_stock || db_stock < 0 {
            Self::Oversold
        } else if initial_stock != db_stock + live_orders_qty {
            Self::LedgerMismatch
        } else {
            match redis_stock {
                None => Self::KeyMissing,
                Some(_) if history_lost => Self::HistoryLost,
                Some(r) if r > expected_redis => Self::RedisHigh,
                Some(r) if r < expected_redis => Self::RedisLow,
                Some(_) => Self::Ok,
            }
        }
    }
}

impl std::fmt::Display for DriftStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::DriftStatus::{self, *};

    #[test]
    fn a_consistent_product_is_ok() {
        assert_eq!(DriftStatus::classify(100, 60, 40, Some(55), 55, false), Ok);
    }

    #[test]
    fn redis_above_expected_is_redis_high_and_below_is_redis_low() {
        assert_eq!(DriftStatus::classify(100, 60, 40, Some(57), 55, false), RedisHigh);
        assert_eq!(DriftStatus::classify(100, 60, 40, Some(50), 55, false), RedisLow);
    }

    #[test]
    fn an_absent_key_is_key_missing_not_sold_out() {
        assert_eq!(DriftStatus::classify(100, 0, 100, None, 0, false), KeyMissing);
    }

    #[test]
    fn a_cut_redis_went_back_from_is_history_lost_even_when_the_numbers_agree() {
        assert_eq!(DriftStatus::classify(100, 60, 40, Some(55), 55, true), HistoryLost);
        assert_eq!(DriftStatus::classify(100, 60, 40, None, 55, true), KeyMissing);
        assert_eq!(DriftStatus::classify(100, 64, 40, Some(64), 64, true), LedgerMismatch);
    }

    #[test]
    fn a_broken_db_identity_is_a_ledger_mismatch() {
        assert_eq!(DriftStatus::classify(100, 64, 40, Some(64), 64, false), LedgerMismatch);
    }

    #[test]
    fn live_orders_beyond_initial_stock_are_an_oversell_whatever_redis_says() {
        assert_eq!(DriftStatus::classify(50, -3, 53, Some(0), -3, false), Oversold);
        assert_eq!(DriftStatus::classify(50, -1, 40, None, -1, false), Oversold);
    }

    #[test]
    fn severity_orders_the_incidents() {
        let mut all = [Ok, RedisLow, Oversold, KeyMissing, HistoryLost, RedisHigh, LedgerMismatch];
        all.sort_by_key(|s| std::cmp::Reverse(s.severity()));
        assert_eq!(all, [Oversold, LedgerMismatch, HistoryLost, KeyMissing, RedisHigh, RedisLow, Ok]);
    }
}
