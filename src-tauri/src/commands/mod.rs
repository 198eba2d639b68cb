//! Commands the window may invoke, by screen. Each parses, calls the core, maps the error.

pub mod alerts;
pub mod attach;
pub mod audit;
pub mod board;
pub mod compensation;
pub mod connection;
pub mod degrade;
pub mod drills;
pub mod overview;
pub mod profiles;
pub mod reconcile;
pub mod rewrite;
pub mod timeline;
