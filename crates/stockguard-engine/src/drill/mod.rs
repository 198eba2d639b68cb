//! Fault injection for tests and drills.
//!
//! - [`proxy`]: a TCP proxy between a client and MySQL or Redis that passes traffic through,
//!   refuses connections, adds latency, black-holes, or cuts existing connections, on
//!   command, while the sale runs.

pub mod proxy;

pub use proxy::{Fault, FaultProxy};
