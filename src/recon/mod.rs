//! Reconciliation: where every unit of stock is, per product (contract section 1).
//!
//! - [`status`]: the drift statuses and how a reading is classified.
//! - [`reading`]: one reading of many products (Redis first, then one DB round trip).

pub mod reading;
pub mod status;

pub use reading::{read_products, Reading, ReconError};
pub use status::DriftStatus;
