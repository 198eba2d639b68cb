//! Faults injected against real servers: Redis restarted empty or failed over to a lagging replica, and the fault proxy.
//!
//! One test binary per area, so that linking costs less on two cores; each file is a module.

#[path = "../support/mod.rs"]
mod support;

mod fault_proxy;
mod redis_faults;
