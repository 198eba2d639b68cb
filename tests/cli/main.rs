//! The `stockguard` binary: its commands, the sandbox, the benchmarks.
//!
//! One test binary per area, so that linking costs less on two cores; each file is a module.

#[path = "../support/sale.rs"]
mod sale;
#[path = "../support/mod.rs"]
mod support;

mod bench_smoke;
mod commands;
mod compensation;
mod demo;
mod drill_report;
mod engine_listen;
mod keychain;
mod refusals;
mod sandbox;
mod ssh_tunnel;
mod steps;
mod timeline;
mod tls;
mod watch;
