//! Sale adapters: the console on a sale Stockguard did not build (issue 28).
//!
//! Real teams run their own tables, status codes, keys and queues. An adapter file names
//! them, and the console reads (and, where the file allows, repairs) that sale with the same
//! statuses as our own, plus `UNSETTLED` while a drift cannot be judged yet.
//!
//! - [`file`]: the adapter file (TOML), parsed and shape-checked; [`ident`] and [`template`]
//!   are its SQL names and key templates.
//! - [`db`]: the DB side of a reading, one SELECT per pass.
//! - [`redis_side`]: the Redis side: a counter, a hash of total and sold, or buckets.
//! - [`inflight`]: where accepted orders wait: a Redis stream, a RabbitMQ queue ([`rabbit`]:
//!   what AMQP and the management API show of it), a BullMQ queue, a table, or nothing.
//! - [`links`]: the sale's DB and Redis connections, as a reading takes them.
//! - [`lost`]: accepted but lost: orders a stream's consumer acknowledged and never wrote.
//! - [`reading`]: two passes and the settled verdict per product; [`unsettled`]: why a
//!   product's reading is no verdict.
//! - [`open`]: a sale opened: its file and the connections it names (the CLI's and the
//!   window's one way in); [`sampler`]: its readings at an interval, as the window's board
//!   takes them.
//! - [`alerts`]: what fires on such a sale, by our own alert conditions (a drift confirmed
//!   only by two settled readings that agree).
//! - [`state`]: the console's own state for such a sale (baselines, audit) in a database of
//!   its own: Stockguard creates, alters and writes nothing in the sale's database.
//! - [`check`]: `adapter check`: every table, column, key and queue the file names exists,
//!   with the orders counted per status; what is not there is a [`missing::Missing`].
//! - [`compensate`]: a product's live orders newest first (the orders a case over an adapter
//!   lists), and the one write into the sale's own database: an order set to its cancelled
//!   status, when the file's `[compensation]` declares it.
//! - [`repair`]: the delta rewrite of a settled drift, where the file allows it.
//! - [`switch`]: the sale's own degrade flag, where `[switch]` says it is: read, and written
//!   by `degrade on|off` (the switch's role rule, audited in the state database).
//! - [`init`]: `adapter init`: a proposed file, read from the sale's schema, its orders per
//!   status and a sample of its keys, with what it could not decide marked; or the same
//!   proposal as a form, checked field by field.
//! - [`attach`]: "Attach a sale" (the desktop's wizard): the proposal as a form from the sale's
//!   URLs, a preview reading as it is edited, and the adapter file and profile saved (with the
//!   baselines, when the sale stores no initial stock).

pub mod alerts;
pub mod attach;
pub mod check;
pub mod compensate;
pub mod db;
pub mod file;
pub mod file_lines;
pub mod ident;
pub mod inflight;
pub mod init;
pub mod links;
pub mod lost;
pub mod missing;
pub mod open;
pub mod rabbit;
pub mod reading;
pub mod redis_side;
pub mod repair;
pub mod sampler;
pub mod state;
pub mod switch;
pub mod template;
pub mod unsettled;

pub use file::{AdapterFile, AdapterFileError};
pub use links::SaleLinks;
pub use open::OpenedSale;
pub use reading::{read, AdapterReading};
pub use unsettled::Unsettled;

/// The most units any figure of a sale may hold (10^15), in its database or its Redis: a figure
/// beyond it cannot be a stock, and the reading refuses it by name rather than add it up (sums
/// of such figures would wrap in a release build and panic in a debug one).
pub const MAX_UNITS: i64 = 1_000_000_000_000_000;

/// What went wrong reading or repairing a sale over its adapter; each failing step named,
/// its cause kept.
#[derive(Debug, thiserror::Error)]
pub enum AdapterError {
    #[error(transparent)]
    File(#[from] AdapterFileError),
    #[error("the sale's database: cannot {step}")]
    Db {
        step: &'static str,
        #[source]
        source: sqlx::Error,
    },
    #[error("the state database: cannot {step}")]
    StateDb {
        step: &'static str,
        #[source]
        source: sqlx::Error,
    },
    #[error("the sale's Redis: cannot {step}")]
    Redis {
        step: &'static str,
        #[source]
        source: redis::RedisError,
    },
    /// The RabbitMQ management API did not answer as a queue's statistics (its URL shown
    /// without a password).
    #[error("the RabbitMQ management API at {url}: {detail}")]
    Management { url: String, detail: String },
    #[error("RabbitMQ: cannot {step}")]
    Amqp {
        step: &'static str,
        #[source]
        source: lapin::Error,
    },
    /// Something the file names does not exist.
    #[error("{0}")]
    Missing(missing::Missing),
    /// An error about what a line of the adapter file names ([`AdapterFile::locate`]): the
    /// error whole (its causes too), then the line.
    #[error("{} (the adapter file {path}, line {line})", crate::step::chain(.inner.as_ref()))]
    At { path: std::path::PathBuf, line: usize, inner: Box<AdapterError> },
    #[error("no product {0} in this sale")]
    UnknownProduct(crate::product_id::ProductId),
    /// The console's state for an adapter sale lives in a database of its own.
    #[error(
        "this needs the state database, where Stockguard keeps its own records for a sale it did not build: \
         set STOCKGUARD_STATE_URL (or --state-url) to a MySQL database of Stockguard's, never the sale's"
    )]
    NoStateDb,
    #[error("the state database: {0}")]
    StateConnect(#[source] crate::connect::ConnectError),
    /// The sale's own MySQL or Redis did not answer (the words are the connection's).
    #[error(transparent)]
    Connect(crate::connect::ConnectError),
    #[error("{0}")]
    Refused(String),
    /// The profile's role (or read-only mark) does not allow the action.
    #[error(transparent)]
    NotAllowed(#[from] crate::action::Refused),
    /// The adapter file allows no repair.
    #[error(
        "sale {sale} is read only: its adapter file allows no repair; add `[repair] rewrite = \"delta\"` to the file \
         to allow the delta rewrite"
    )]
    ReadOnly { sale: String },
    /// A repair on production without the product id typed again.
    #[error("PRODUCTION: confirm the repair with --confirm {0} (the product id typed again)")]
    ConfirmationRequired(crate::product_id::ProductId),
}

impl AdapterError {
    /// What the sale lacks, when that is what this says (wherever the file names it).
    pub fn missing(&self) -> Option<&missing::Missing> {
        match self {
            Self::Missing(m) => Some(m),
            Self::At { inner, .. } => inner.missing(),
            _ => None,
        }
    }
}
