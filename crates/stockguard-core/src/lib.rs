//! Stockguard core: the console's library and the contract the engine keeps.
//!
//! This crate knows nothing of its front ends, and nothing of the engine. The `stockguard` CLI
//! (the root package) and the Tauri desktop app (`src-tauri/`) are two thin doors into it: they
//! parse input, call one function here and map its typed error to a message. The reference
//! engine (`stockguard-engine`) depends on it for the contract (keys, the reservation message,
//! the switch rows), never the other way; nor does it depend on any CLI or HTTP-server crate.
//!
//! A tour, in the order a request for "is Redis telling the truth?" travels:
//!
//! - [`profile`]: connection profiles (environment kind, URLs, key prefix, role), the
//!   profiles file, passwords in the OS keychain, environment-variable overrides.
//! - [`action`]: who may do what, one rule per action derived from the role catalogue's
//!   grants, asked by every door ([`profile::ConnectionSettings::may`]); one [`action::Refused`].
//! - [`connect`]: opening MySQL and Redis from resolved settings, classified connect errors,
//!   the embedded migrations ([`connect::MIGRATOR`]).
//! - [`crypto_provider`]: the process's one rustls crypto provider (ring), a leaf.
//! - [`tls`]: TLS on the wire: a profile's Redis certificates read, and what a connection
//!   used ([`tls::Transport`]).
//! - [`ssh_tunnel`]: an SSH bastion in-process (`russh`): the host key checked against a
//!   known_hosts file, a key file, loopback ports forwarded to the servers behind it.
//! - [`redis_link`]: one Redis link whether the sale runs on one server or a Redis Cluster
//!   (a comma-separated URL of seed nodes), and pipelines split by hash slot.
//! - [`lang`]: the two languages (zh, en) of the window, reports and notifications.
//! - [`product_id`]: a product id as a sale keeps it, a number or text ([`ProductId`]): shown,
//!   carried in JSON and bound to SQL as itself.
//! - [`keys`]: the Redis key names of the stock contract (`sg:{P}:stock`, ...).
//! - [`reservation`]: the reservation message the reserve step puts on a product's stream.
//! - [`backlog`]: how much of the streams is not yet persisted (health strip, engine
//!   `/metrics`).
//! - [`recon`]: where every unit of stock is: exact readings, statuses, the ledger check, the
//!   drift sampler.
//! - [`adapter`]: a sale Stockguard did not build, read through an adapter file (its own
//!   tables, status codes, keys and queue): the settled reading, `adapter check`, baselines
//!   and the delta repair, the console's own records in a state database of its own, and the
//!   attach wizard (`adapter init`'s proposal as a form, checked field by field, saved).
//! - [`rewrite`]: the locked, fenced rewrite of Redis stock.
//! - [`switch`]: the degrade switch in MySQL, engine heartbeats and acknowledgements, the
//!   guided exit from DB mode.
//! - [`health`]: the console's health strip: server round trips, stream backlog, pending
//!   releases.
//! - [`chart`]: drift-over-time charts drawn with `plotters` (SVG for a window, PNG files).
//! - [`catalog`]: the products of a sale.
//! - [`overview`]: the sale overview, the first screen after connecting: units sold, orders/s,
//!   answers by kind, p99 and backlog from the engines' `/metrics`, the mode, open alerts and
//!   compensation cases, and the stock burn-down derived from the ledger.
//! - [`alerts`]: alerts raised by a reading (confirmed drift, oversell, ledger, missing key,
//!   backlog) and their acknowledgements, which close by themselves when the alert clears.
//! - [`audit`]: the append-only audit log of every write action (its actor is the server's
//!   word).
//! - [`compensation`]: oversell compensation: a case from the ledger, a plan per affected
//!   order, four eyes the database enforces, and an execution with one effect per line.
//! - [`roles`]: roles the servers enforce: the catalogue of MySQL grants and Redis ACL
//!   rules per role, the roles file, the plan and its idempotent apply, and the effective
//!   rights of a connection read back from the servers.
//! - [`drills`]: fault drills as the console sees them: the drill files (`drills/*.toml`),
//!   runs with their heartbeat and halt requests, each run's timeline and summary, and after
//!   a run its report, its comparison with another run and the facilitator's review notes.
//!
//! - [`sale`]: one sale, whoever built it: our own or one read over its adapter file, opened
//!   one way, with the one table of what each kind can do that both doors ask.
//! - [`timeline`]: one time-ordered list of what happened to a sale (switch changes, guided
//!   exits, rewrites and repairs, acknowledgements, compensation steps, drills, every other
//!   audited action), read from the records that exist, for both kinds of sale.
//! - [`guarantee`]: what an engine's ACCEPTED answer survives (a replica vouched, written
//!   through to the DB, or nothing: opted out), as engines report it in their heartbeats.
//! - [`tx`]: transactions begun whole: a begin of several statements run to its end even
//!   when its caller is dropped, so no connection goes back to the pool inside a transaction
//!   nobody ends.
//! - [`step`]: errors that name the step that failed and keep the server's words as their
//!   cause, and the one-line chain the doors print.
//!
//! The contract these modules implement is restated in `docs/contract.md`.

pub mod action;
pub mod adapter;
pub mod alerts;
pub mod audit;
pub mod backlog;
pub mod catalog;
pub mod chart;
pub mod compensation;
pub mod connect;
pub mod crypto_provider;
pub mod drills;
pub mod guarantee;
pub mod health;
pub mod keys;
pub mod lang;
pub mod overview;
pub mod product_id;
pub mod profile;
pub mod recon;
pub mod redis_link;
pub mod reservation;
pub mod rewrite;
pub mod roles;
pub mod sale;
pub mod ssh_tunnel;
pub mod step;
pub mod switch;
pub mod timeline;
pub mod tls;
pub mod tx;

pub use product_id::ProductId;

#[cfg(test)]
mod tests {
    /// A product the sale does not have is said one way, whichever room found it.
    #[test]
    fn an_unknown_product_is_said_the_same_way_by_every_room() {
        let said = [
            crate::recon::ReconError::UnknownProduct(7).to_string(),
            crate::adapter::AdapterError::UnknownProduct(7.into()).to_string(),
            crate::overview::OverviewError::NoSuchProduct(7).to_string(),
            crate::compensation::CompensationError::NoSuchProduct(7).to_string(),
        ];
        assert!(said.iter().all(|s| s == "no product 7 in this sale"), "{said:?}");
    }
}
