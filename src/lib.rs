//! Stockguard: the core of a flash-sale console and reference engine that must never oversell.
//!
//! This crate knows nothing of its front ends. The `stockguard` CLI (`src/main.rs`,
//! `src/cli/`) and the Tauri desktop app (`src-tauri/`) are two thin doors into it: they parse
//! input, call one function here and map its typed error to a message.
//!
//! A tour, in the order a request for "is Redis telling the truth?" travels:
//!
//! - [`profile`]: connection profiles (environment kind, URLs, key prefix, role), the
//!   profiles file, passwords in the OS keychain, environment-variable overrides.
//! - [`connect`]: opening MySQL and Redis from resolved settings, classified connect errors,
//!   the embedded migrations ([`connect::MIGRATOR`]).
//! - [`keys`]: the Redis key names of the stock contract (`sg:{P}:stock`, ...).
//! - [`reservation`]: the reservation message the reserve step puts on a product's stream.
//! - [`backlog`]: how much of the streams is not yet persisted (health strip, `/metrics`).
//! - [`engine`]: the sale engine: reserve in Redis, persist to the DB exactly once, close and
//!   cancel, relay releases, the degraded DB-only path, rate limits, metrics, HTTP.
//! - [`recon`]: where every unit of stock is: exact readings, statuses, the ledger check, the
//!   drift sampler.
//! - [`rewrite`]: the locked, fenced rewrite of Redis stock.
//! - [`switch`]: the degrade switch in MySQL, engine heartbeats and acknowledgements, the
//!   guided exit from DB mode.
//! - [`drill`]: fault injection for tests and drills (a TCP proxy that can refuse, delay,
//!   black-hole and cut).
//! - [`health`]: the console's health strip: server round trips, stream backlog, pending
//!   releases.
//! - [`chart`]: drift-over-time charts drawn with `plotters` (SVG for a window, PNG files).
//! - [`load`]: the load generator that proves the engine: drive, drain, verify, report.
//! - [`bench`]: benchmarks measured side by side (`stockguard bench ...`).
//! - [`catalog`]: the products of a sale.
//! - [`audit`]: the append-only audit log of every write action.
//! - [`sandbox`]: a local sale (private MariaDB/Redis when none is reachable) and its demo
//!   seed.
//!
//! The contract these modules implement is restated in `docs/contract.md`.

pub mod audit;
pub mod backlog;
pub mod bench;
pub mod catalog;
pub mod chart;
pub mod connect;
pub mod drill;
pub mod engine;
pub mod health;
pub mod keys;
pub mod load;
pub mod profile;
pub mod recon;
pub mod reservation;
pub mod rewrite;
pub mod sandbox;
pub mod switch;
