//! Stockguard's reference sale engine and the tools that prove it.
//!
//! The console watches a sale; this crate *is* one: what the sandbox runs and what drills and
//! benchmarks drive. It speaks the engine-console contract through `stockguard-core` (keys,
//! the reservation message, the degrade switch's rows, readings), and nothing in the core
//! depends on it, so the desktop app never compiles an HTTP server, a metrics registry or the
//! load generator.
//!
//! A tour, in the order an order travels:
//!
//! - [`engine`]: the sale engine: reserve in Redis, persist to the DB exactly once, close and
//!   cancel, relay releases, the degraded DB-only path, rate limits, metrics, HTTP.
//! - [`load`]: the load generator that proves the engine: drive, drain, verify, report.
//! - [`bench`]: benchmarks measured side by side (`stockguard bench ...`).
//! - [`drill`]: fault injection for tests and drills: TCP proxies that refuse, delay, throttle,
//!   black-hole, reset and cut, in process or as a service behind Toxiproxy's HTTP API; and
//!   the drill runner, which runs a drill file end to end on a rig of its own.
//! - [`sandbox`]: a local sale (private MariaDB/Redis when none is reachable, or a private
//!   Redis Cluster) and its demo seed.
//! - [`watch`]: the headless watcher: readings served as Prometheus metrics for a team's own
//!   monitoring (`stockguard watch`).

pub mod bench;
pub mod drill;
pub mod engine;
pub mod load;
pub mod sandbox;
pub mod watch;
