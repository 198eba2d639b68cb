//! Fault injection for tests and drills.
//!
//! - [`proxy`]: a TCP proxy between a client and MySQL or Redis that passes traffic through,
//!   refuses connections, adds latency, black-holes, or cuts existing connections, on
//!   command, while the sale runs (in process, scripted by tests).
//! - [`service`]: the fault proxy as a service (`stockguard drill proxy serve`): proxies
//!   ([`link`]) driven through Toxiproxy's HTTP API, their faults ([`toxics`]) under leases.
//! - [`client`]: that API from the runner's side, holding faults by renewing their leases.
//! - [`runner`]: a drill file run end to end: the rig, the load, the fault timeline, the
//!   invariants every tick, the abort, the verdict.

pub mod client;
pub mod link;
pub mod proxy;
pub mod runner;
pub mod service;
pub mod toxics;

pub use proxy::{Fault, FaultProxy};
