//! Faults injected against real servers: Redis restarted empty, failed over to a lagging
//! replica or down for ten seconds under an engine, and the fault proxy.
//!
//! One test binary per area, so that linking costs less on two cores; each file is a module.

#[path = "../support/mod.rs"]
mod support;

mod fault_proxy;
mod outage_backoff;
mod redis_faults;
