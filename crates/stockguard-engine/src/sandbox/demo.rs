//! The demo's live traffic (`make demo`): which products its buyers buy, how fast, and the
//! pay window its engine gives them, chosen so that the demo keeps selling however long it
//! runs.
//!
//! The demo's buyers never pay. The engine closes an order left unpaid past its pay window,
//! and its unit goes back on sale through the outbox and the release relay: the sale's own
//! path, so the reading stays exact and no unit is added from outside the ledger. A product
//! therefore never has more of its units held by the demo's orders than its buyers take in
//! one pay window (plus the closer's lag): [`DemoTraffic::units_held_at_most`]. While the
//! stock the seed leaves a product is larger than that, the product never sells out.
//!
//! `scripts/demo.sh` takes its arguments from here (`stockguard sandbox demo-args`), so the
//! demo runs the plan this module states and the tests hold.

use std::time::Duration;

/// What the demo's engine and buyers do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DemoTraffic {
    /// The products the buyers buy, one unit an order, in turn.
    pub products: &'static [u64],
    /// Requests a second, over all the products.
    pub rate: u32,
    /// How long the engine lets an order stay unpaid (`engine serve --payment-timeout`).
    pub pay_window: Duration,
    /// One `stockguard load` run. The demo starts the next one as each ends, so the buyers
    /// go on however long the demo runs, and each round's record is checked against the DB
    /// (nothing lost, nothing twice, nothing oversold) in the buyers' log.
    pub round: Duration,
}

/// The longest an unpaid order's unit takes, past its pay window, to be on sale again: the
/// engine's closer and relay each pass every 500 ms, and persisting (which sets the order's
/// deadline) takes milliseconds.
pub const CLOSE_LAG: Duration = Duration::from_secs(2);

/// The demo's plan: 40 buyers a second on three of the seed's healthy products, a 20 s pay
/// window, rounds of 10 minutes.
pub const DEMO_TRAFFIC: DemoTraffic = DemoTraffic {
    products: &[1001, 1003, 1006],
    rate: 40,
    pay_window: Duration::from_secs(20),
    round: Duration::from_secs(600),
};

impl DemoTraffic {
    /// Orders a second on each product.
    pub fn rate_per_product(&self) -> f64 {
        f64::from(self.rate) / self.products.len() as f64
    }

    /// The most units of one product the demo's unpaid orders hold at once: what its buyers
    /// take in one pay window and the closer's lag. Every unit beyond it is always on sale.
    pub fn units_held_at_most(&self) -> i64 {
        (self.rate_per_product() * (self.pay_window + CLOSE_LAG).as_secs_f64()).ceil() as i64
    }

    /// Whether a product that starts with `stock` units on sale keeps selling for as long as
    /// the demo runs.
    pub fn keeps_selling_with(&self, stock: i64) -> bool {
        stock > self.units_held_at_most()
    }

    /// Distinct buyers in one round: each asks once for each product.
    pub fn buyers_per_round(&self) -> u64 {
        (u64::from(self.rate) * self.round.as_secs()).div_ceil(self.products.len() as u64)
    }

    /// `stockguard engine serve`'s arguments beyond `--listen`.
    pub fn engine_args(&self) -> Vec<String> {
        vec!["--payment-timeout".into(), self.pay_window.as_secs().to_string()]
    }

    /// `stockguard load`'s arguments beyond `--target`, for one round.
    pub fn load_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for product in self.products {
            args.extend(["--product".to_string(), product.to_string()]);
        }
        args.extend([
            "--rate".to_string(),
            self.rate.to_string(),
            "--buyers".to_string(),
            self.buyers_per_round().to_string(),
            "--duration".to_string(),
            format!("{}s", self.round.as_secs()),
            "--concurrency".to_string(),
            "4".to_string(),
            "--drain-timeout".to_string(),
            "5s".to_string(),
        ]);
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_product_keeps_selling_only_with_more_stock_than_one_pay_window_of_buyers_takes() {
        let plan =
            DemoTraffic { products: &[1, 2], rate: 10, pay_window: Duration::from_secs(8), round: DEMO_TRAFFIC.round };
        // 5 orders a second on each product, for 8 s of pay window and 2 s of closer's lag.
        assert_eq!(plan.units_held_at_most(), 50);
        assert!(plan.keeps_selling_with(51));
        assert!(!plan.keeps_selling_with(50));
    }

    #[test]
    fn a_round_has_a_buyer_for_every_request_it_sends() {
        let plan = DEMO_TRAFFIC;
        let requests = u64::from(plan.rate) * plan.round.as_secs();
        assert!(plan.buyers_per_round() * plan.products.len() as u64 >= requests);
    }
}
