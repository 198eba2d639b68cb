//! The step every loop that reads a sale calls after each reading: a product confirmed
//! `OVERSOLD` gets its compensation case opened ([`super::open::open_case`], idempotent), once
//! per incident.
//!
//! The sampler behind the window does not do it on the way: the window's board feed, the
//! headless `stockguard watch` and any other loop call [`OnOversold::observe`] themselves, so
//! an oversell opens its case whether or not a window is open.

use std::collections::HashSet;

use sqlx::MySqlPool;

use super::open::{open_case, Opened};
use super::CompensationError;
use crate::recon::drift::ConfirmedDrift;
use crate::recon::{DriftStatus, Reading};

/// Remembers which products' incidents were acted on: a product is tried again only after a
/// reading that is not `OVERSOLD`.
#[derive(Debug, Default)]
pub struct OnOversold {
    tried: HashSet<u64>,
}

impl OnOversold {
    /// Opens the cases this tick calls for: `(product, what opening said)`. An account that
    /// may not open one gets its refusal here, once per incident, for its loop to say.
    pub async fn observe(
        &mut self,
        pool: &MySqlPool,
        readings: &[Reading],
        confirmed: &[ConfirmedDrift],
    ) -> Vec<(u64, Result<Opened, CompensationError>)> {
        for r in readings.iter().filter(|r| r.status != DriftStatus::Oversold) {
            self.tried.remove(&r.product_id);
        }
        let mut opened = Vec::new();
        for c in confirmed.iter().filter(|c| c.status == DriftStatus::Oversold) {
            if self.tried.insert(c.product_id) {
                opened.push((c.product_id, open_case(pool, c.product_id).await));
            }
        }
        opened
    }
}

/// What a loop says when a case could not be opened.
pub fn not_opened(product: u64, error: &CompensationError) -> String {
    format!("product {product} is OVERSOLD but its compensation case was not opened: {error}")
}
