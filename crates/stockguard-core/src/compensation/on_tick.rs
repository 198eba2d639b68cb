//! The step every loop that reads a sale calls after each reading: a product confirmed
//! `OVERSOLD` gets its compensation case opened ([`super::open::open_case`], idempotent), once
//! per incident.
//!
//! The sampler behind the window does not do it on the way: the window's board feed, the
//! headless `stockguard watch` and any other loop call [`OnOversold::observe`] themselves, so
//! an oversell opens its case whether or not a window is open.
//!
//! [`OnOversold::observe_adapter`] is its twin for a sale read over its adapter: the same
//! once-per-incident rule, the case opened in the state database from the sale's own orders
//! ([`super::over_adapter::open_case`]). The loop passes only drifts two settled readings
//! agreed on, as every adapter loop does.

use std::collections::HashSet;

use sqlx::MySqlPool;

use super::open::{open_case, Opened};
use super::over_adapter::{self, SaleSide};
use super::CompensationError;
use crate::adapter::AdapterReading;
use crate::product_id::ProductId;
use crate::recon::drift::ConfirmedDrift;
use crate::recon::{DriftStatus, Reading};

/// Remembers which products' incidents were acted on: a product is tried again only after a
/// reading that is not `OVERSOLD`.
#[derive(Debug, Default)]
pub struct OnOversold {
    tried: HashSet<ProductId>,
}

impl OnOversold {
    /// Opens the cases this tick calls for: `(product, what opening said)`. An account that
    /// may not open one gets its refusal here, once per incident, for its loop to say.
    pub async fn observe(
        &mut self,
        pool: &MySqlPool,
        readings: &[Reading],
        confirmed: &[ConfirmedDrift],
    ) -> Vec<(ProductId, Result<Opened, CompensationError>)> {
        let mut opened = Vec::new();
        // Our own sale's ids are numbers.
        for product in self.due(readings, confirmed) {
            let Some(number) = product.as_num() else { continue };
            opened.push((product, open_case(pool, number).await));
        }
        opened
    }

    /// The same step on a sale read over its adapter: `state` is the state database, the
    /// initial stock each case is judged against is the reading's. A product whose reading
    /// has no initial stock (no baseline recorded yet) is refused, as the reading judges no
    /// ledger there.
    pub async fn observe_adapter(
        &mut self,
        state: &MySqlPool,
        sale: SaleSide<'_>,
        readings: &[AdapterReading],
        confirmed: &[ConfirmedDrift],
    ) -> Vec<(ProductId, Result<Opened, CompensationError>)> {
        let plain: Vec<Reading> = readings.iter().map(|r| r.reading.clone()).collect();
        let mut opened = Vec::new();
        for product in self.due(&plain, confirmed) {
            let Some(r) = readings.iter().find(|r| r.reading.product_id == product) else { continue };
            let result = if r.initial_source == "none" {
                Err(CompensationError::Refused(format!(
                    "product {product} has no initial stock to judge against: record a baseline (adapter baseline)"
                )))
            } else {
                // The accepted-but-lost orders join here once the adapter lists them.
                over_adapter::open_case(state, sale, &product, r.reading.initial_stock, &[]).await
            };
            opened.push((product, result));
        }
        opened
    }

    /// The products whose incident this tick starts: confirmed `OVERSOLD` and not acted on
    /// since their last reading that was not.
    fn due(&mut self, readings: &[Reading], confirmed: &[ConfirmedDrift]) -> Vec<ProductId> {
        for r in readings.iter().filter(|r| r.status != DriftStatus::Oversold) {
            self.tried.remove(&r.product_id);
        }
        confirmed
            .iter()
            .filter(|c| c.status == DriftStatus::Oversold)
            .map(|c| c.product_id.clone())
            .filter(|p| self.tried.insert(p.clone()))
            .collect()
    }
}

/// What a loop says when a case could not be opened.
pub fn not_opened(product: &ProductId, error: &CompensationError) -> String {
    format!("product {product} is OVERSOLD but its compensation case was not opened: {error}")
}
