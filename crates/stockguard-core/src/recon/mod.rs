//! Reconciliation: where every unit of stock is, per product (contract section 1).
//!
//! - [`status`]: the drift statuses and how a reading is classified.
//! - [`reading`]: one exact reading of many products (a Redis cut, then one DB statement).
//! - [`ledger`]: the DB ledger check, chunked, read-only, under a statement time limit.
//! - [`fork`]: a Redis history that a failover forked (two orders of one number).
//! - [`drift`]: the rule that confirms a drift (two readings in a row agree on it).
//! - [`sampler`]: readings at an interval, history for charts; it only reads.

pub mod drift;
pub mod fork;
pub mod ledger;
pub mod reading;
pub mod sampler;
pub mod status;

pub use drift::{ConfirmedDrift, DriftTracker};
pub use reading::{read_products, read_products_light, LedgerGaps, Reading, ReconError};
pub use status::DriftStatus;
