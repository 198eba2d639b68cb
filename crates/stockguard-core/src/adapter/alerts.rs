//! The alerts of a sale read through its adapter, for a one-off command: two readings (each
//! already two passes that must agree), a drift confirmed when both readings agree on it and
//! the second is settled (an `UNSETTLED` product is never a drift verdict), and the ledger's
//! statuses at once, by the same conditions as our own sale's ([`crate::alerts::evaluate`]).
//! The streams' backlog and the engines' breakers are our engine's signals: a sale we did not
//! build has neither here.

use std::collections::{HashMap, HashSet};

use super::links::SaleLinks;
use super::reading::read;
use super::{AdapterError, AdapterFile, AdapterReading};
use crate::alerts::{evaluate, Alert, Signals};
use crate::product_id::ProductId;
use crate::profile::thresholds::Thresholds;
use crate::recon::drift::ConfirmedDrift;
use crate::recon::{DriftTracker, Reading};
use crate::redis_link::Link;

/// What fires now on the sale `file` describes, with the second reading it was judged on
/// (which an acknowledgement's close needs: [`crate::alerts::acks::cleared`]).
pub async fn firing<C: Link>(
    file: &AdapterFile,
    links: &SaleLinks<'_, C>,
    baselines: &HashMap<ProductId, i64>,
    thresholds: &Thresholds,
) -> Result<(Vec<Alert>, Vec<Reading>), AdapterError> {
    let judged = judged(file, links, baselines, thresholds).await?;
    Ok((judged.alerts, plain(&judged.second)))
}

/// Two readings and what fires on them, each reading whole (the overview counts the sale's
/// order rows in both for its rate).
pub struct Judged {
    pub first: Vec<AdapterReading>,
    pub second: Vec<AdapterReading>,
    pub alerts: Vec<Alert>,
}

/// The two readings of [`firing`], kept whole.
pub async fn judged<C: Link>(
    file: &AdapterFile,
    links: &SaleLinks<'_, C>,
    baselines: &HashMap<ProductId, i64>,
    thresholds: &Thresholds,
) -> Result<Judged, AdapterError> {
    let mut tracker = DriftTracker::default();
    let first = read(file, links, baselines, &[]).await?;
    tracker.observe(&plain(&first));
    let second = read(file, links, baselines, &[]).await?;
    let readings = plain(&second);
    let confirmed = confirm_settled(&mut tracker, &readings);
    let alerts = evaluate(&readings, &confirmed, &Signals::default(), thresholds);
    Ok(Judged { first, second, alerts })
}

fn plain(readings: &[AdapterReading]) -> Vec<Reading> {
    readings.iter().map(|r| r.reading.clone()).collect()
}

/// The drifts two readings in a row agree on, of the products the second reading settled: the
/// rule of every loop over an adapter (an `UNSETTLED` product is never a verdict).
pub fn confirm_settled(tracker: &mut DriftTracker, readings: &[Reading]) -> Vec<ConfirmedDrift> {
    let settled: HashSet<&ProductId> = readings.iter().filter(|r| r.settled).map(|r| &r.product_id).collect();
    tracker.observe(readings).into_iter().filter(|c| settled.contains(&c.product_id)).collect()
}
