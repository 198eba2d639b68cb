//! Faults injected against real servers: Redis restarted empty, failed over to a lagging
//! replica or down for ten seconds under an engine; the fault proxy, in process and as a
//! service driven through Toxiproxy's API.
//!
//! One test binary per area, so that linking costs less on two cores; each file is a module.

#[path = "../support/sale.rs"]
mod sale;
#[path = "../support/mod.rs"]
mod support;

mod accepted_by_default;
mod accepted_final;
mod cancelled_begin;
mod cluster_accepted;
mod cluster_failover;
mod failover_sale;
mod fault_proxy;
mod history_mark;
mod one_server_failover;
mod outage_backoff;
mod proxy_service;
mod redis_faults;
mod replica_acks;
mod replica_readback;
