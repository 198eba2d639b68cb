//! The adapter file: a TOML description of a sale Stockguard did not build (its stock table,
//! its orders and their status codes, its Redis keys, where accepted orders wait).
//!
//! Parsing checks the shape only (names are identifiers, templates carry `${id}`, exactly one
//! Redis stock form); whether the tables, columns, keys and queues exist is
//! [`super::check`]'s work. The format is the contract in `docs/adapters/README.md`: extend
//! it, never rename a field.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::file_lines::FileLines;
use super::ident::Ident;
use super::template::Template;
use crate::product_id::{IdKind, ProductId};

/// A parsed, shape-checked adapter file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AdapterFile {
    pub sale: SaleSection,
    #[serde(default)]
    pub stock: Option<StockSection>,
    #[serde(default)]
    pub orders: Option<OrdersSection>,
    #[serde(default)]
    pub redis: Option<RedisSection>,
    #[serde(default)]
    pub inflight: Inflight,
    #[serde(default)]
    pub repair: RepairSection,
    #[serde(default)]
    pub compensation: CompensationSection,
    /// Where the sale reads its own degrade flag (`stockguard degrade on|off` writes it).
    #[serde(default)]
    pub switch: Option<SwitchSection>,
    /// The `# UNDECIDED: ...` lines `adapter init` wrote and nobody settled yet: the file parses,
    /// but `adapter check` fails on each (a proposal as written reads wrong).
    #[serde(skip)]
    pub undecided: Vec<UndecidedLine>,
    /// Where the file's text says what: a problem found later names its line.
    #[serde(skip)]
    pub lines: FileLines,
}

/// One `# UNDECIDED: <what>` line of a proposed file, by its line number (from 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UndecidedLine {
    pub line: usize,
    pub what: String,
}

/// The file's `# UNDECIDED: ...` lines.
fn undecided_lines(text: &str) -> Vec<UndecidedLine> {
    text.lines()
        .enumerate()
        .filter_map(|(n, l)| {
            let what = l.trim_start().strip_prefix('#')?.trim_start().strip_prefix("UNDECIDED:")?;
            Some(UndecidedLine { line: n + 1, what: what.trim().to_string() })
        })
        .collect()
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SaleSection {
    /// Names the sale in the state database (baselines, audit, cases).
    pub name: String,
    /// The products, when there is no stock table to list them.
    #[serde(default)]
    /// Numbers, or text for a sale keyed by text (`["SKU-A", "SKU-B"]`); all of one kind.
    pub products: Vec<ProductId>,
    /// How long a product must stay still between the reading's two passes for its drift to
    /// be a verdict, in milliseconds (default 1000). It must outlast the sale's own request:
    /// a unit its order path took in Redis and has not yet written anywhere we read (between
    /// a `DECR` and the row, or the publish) is invisible, and only time shows it.
    #[serde(default)]
    pub settle_ms: Option<u64>,
    /// The most in-flight entries (stream entries, jobs, pending rows) one pass reads and
    /// attributes, per source (default 100,000). A backlog past it is said (the product is
    /// `UNSETTLED`, with the depth), never cut short in silence.
    #[serde(default)]
    pub max_inflight: Option<u64>,
}

/// The default of `[sale] settle_ms`.
pub const DEFAULT_SETTLE_MS: u64 = 1000;
/// The largest `[sale] settle_ms`: a reading waits for it twice over, so a larger one would
/// look like a console that hangs.
pub const MAX_SETTLE_MS: u64 = 60_000;
/// The default of `[sale] max_inflight`.
pub const DEFAULT_MAX_INFLIGHT: u64 = 100_000;
/// The default of `[inflight] stats_interval_ms`: RabbitMQ's own `collect_statistics_interval`.
pub const DEFAULT_STATS_INTERVAL_MS: u64 = 5_000;

impl SaleSection {
    pub fn settle(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.settle_ms.unwrap_or(DEFAULT_SETTLE_MS))
    }

    /// The in-flight entries one pass attributes, per source.
    pub fn max_inflight(&self) -> usize {
        self.max_inflight.unwrap_or(DEFAULT_MAX_INFLIGHT) as usize
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StockSection {
    pub table: Ident,
    pub product: Ident,
    /// Units left (on a two-phase lock sale, the physical stock, `reserved` beside it).
    pub remaining: Ident,
    /// Units held by unpaid orders (two-phase lock).
    #[serde(default)]
    pub reserved: Option<Ident>,
    pub initial: Initial,
    /// A display name column.
    #[serde(default)]
    pub name: Option<Ident>,
}

/// Where a product's initial stock comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Initial {
    /// A column of the stock table.
    Column(Ident),
    /// Recorded by `stockguard adapter baseline` in the state database.
    Baseline,
    /// The same number for every product.
    Fixed(i64),
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OrdersSection {
    pub table: Ident,
    pub product: Ident,
    /// Units per order, when every order is of the same size (default 1).
    #[serde(default)]
    pub quantity: Option<i64>,
    /// The column holding an order's units.
    #[serde(default)]
    pub quantity_column: Option<Ident>,
    pub status: Ident,
    /// Statuses whose orders hold a unit.
    pub live: Vec<StatusValue>,
    /// Statuses whose unit went back to stock.
    #[serde(default)]
    pub released: Vec<StatusValue>,
    /// Live statuses whose units sit in `stock.reserved` (two-phase lock: unpaid).
    #[serde(default)]
    pub reserving: Vec<StatusValue>,
    #[serde(default)]
    pub order_id: Option<Ident>,
    #[serde(default)]
    pub created: Option<Ident>,
    #[serde(default)]
    pub user: Option<Ident>,
    /// The status, created and user columns are on a parent table.
    #[serde(default)]
    pub join: Option<Join>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Join {
    pub table: Ident,
    /// The orders table's column that names the parent.
    pub on: Ident,
    /// The parent's key column.
    pub key: Ident,
}

/// A status code as the sale stores it: a number or a string.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(untagged)]
pub enum StatusValue {
    Int(i64),
    Text(String),
}

impl std::fmt::Display for StatusValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Int(i) => write!(f, "{i}"),
            Self::Text(s) => write!(f, "{s:?}"),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedisSection {
    /// A string counter of units left.
    #[serde(default)]
    pub stock: Option<Template>,
    /// A hash with a total and a sold field.
    #[serde(default)]
    pub stock_hash: Option<StockHash>,
    /// Stock split into bucket keys.
    #[serde(default)]
    pub buckets: Option<Buckets>,
    /// A set of buyers per product (read for information).
    #[serde(default)]
    pub buyers: Option<Template>,
    /// How a counter below zero is read.
    #[serde(default)]
    pub negative: Option<Negative>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StockHash {
    pub key: Template,
    pub total: String,
    pub sold: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Buckets {
    /// One key per bucket: `${id}` and `${n}` (0-based).
    pub key: Template,
    /// The key holding the number of buckets.
    pub count: Template,
    /// A per-bucket DB table, when the sale keeps one: each bucket's Redis units are then
    /// judged against its own row (a bucket can drift while the total looks right).
    #[serde(default)]
    pub table: Option<Ident>,
    /// Its product column.
    #[serde(default)]
    pub product: Option<Ident>,
    /// Its bucket number column (the `${n}` of the key).
    #[serde(default)]
    pub bucket: Option<Ident>,
    /// Its units-left column.
    #[serde(default)]
    pub available: Option<Ident>,
}

/// A per-bucket DB table, all four names given.
pub struct BucketTable<'a> {
    pub table: &'a Ident,
    pub product: &'a Ident,
    pub bucket: &'a Ident,
    pub available: &'a Ident,
}

impl Buckets {
    pub fn db_table(&self) -> Option<BucketTable<'_>> {
        match (&self.table, &self.product, &self.bucket, &self.available) {
            (Some(table), Some(product), Some(bucket), Some(available)) => {
                Some(BucketTable { table, product, bucket, available })
            }
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Negative {
    /// The counter keeps going below zero with every rejected try: read as 0, the excess shown.
    Clamp,
}

/// How a product's Redis stock is kept.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RedisForm<'a> {
    Counter(&'a Template),
    Hash(&'a StockHash),
    Buckets(&'a Buckets),
}

impl RedisSection {
    /// The one stock form the file names (checked at parse time).
    pub fn form(&self) -> RedisForm<'_> {
        match (&self.stock, &self.stock_hash, &self.buckets) {
            (Some(t), _, _) => RedisForm::Counter(t),
            (_, Some(h), _) => RedisForm::Hash(h),
            (_, _, Some(b)) => RedisForm::Buckets(b),
            _ => unreachable!("checked by AdapterFile::parse"),
        }
    }
}

/// Where accepted orders wait before they are DB rows.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(tag = "source", rename_all = "snake_case", deny_unknown_fields)]
pub enum Inflight {
    /// Orders become rows in the request (or the sale keeps no queue).
    #[default]
    None,
    /// A Redis stream (one for all products, or `${id}` for one each) read by a consumer group.
    RedisStream {
        stream: Template,
        group: String,
        product_field: String,
        /// Entries that carry the order id are de-duplicated against the rows already in the DB.
        #[serde(default)]
        order_id_field: Option<String>,
    },
    /// A RabbitMQ queue. Its messages cannot be read without taking them, so only its depth
    /// is known: while it is not empty the reading is `UNSETTLED`. Messages a consumer holds
    /// unacknowledged are not in that depth: only the management API shows them.
    Rabbitmq {
        url: String,
        queue: String,
        #[serde(default)]
        product_field: Option<String>,
        /// The RabbitMQ management HTTP API (`http://user:pass@host:15672`): the queue's
        /// messages held unacknowledged by its consumers. Without it, a queue with consumers
        /// cannot show what they hold, and no drift on the sale is a verdict.
        #[serde(default)]
        management_url: Option<String>,
        /// How often RabbitMQ refreshes the figures its management API gives
        /// (`collect_statistics_interval`, 5,000 ms by default): a figure can be two intervals
        /// old, so a drift is a verdict only on figures read that long (and 2 s) after the
        /// reading's first pass began.
        #[serde(default)]
        stats_interval_ms: Option<u64>,
    },
    /// A BullMQ queue (Node's Redis queue) in the sale's Redis: the jobs waiting, paused,
    /// active, prioritized, delayed or waiting for children, each a hash whose `data` is the
    /// JSON the producer gave; completed and failed jobs are not in flight.
    Bullmq {
        /// The queue's name (`new Queue(name)`).
        queue: String,
        /// The key prefix (BullMQ's `prefix` option, `bull` by default): keys are
        /// `<prefix>:<queue>:wait`, ... and `<prefix>:<queue>:<jobId>`. On a Redis Cluster
        /// BullMQ needs a hash tag (`{bull}`) so that one script reads them all.
        #[serde(default = "default_bullmq_prefix")]
        prefix: String,
        /// The field of a job's `data` naming the product.
        product_field: String,
        /// The field of a job's `data` naming the order: jobs that carry it are de-duplicated
        /// against the rows already in the DB.
        #[serde(default)]
        order_id_field: Option<String>,
    },
    /// A table of pending messages (an outbox, a request table) in the sale's own database,
    /// read in the same snapshot as the orders.
    Table {
        table: Ident,
        product_column: Ident,
        /// Rows that carry the order id are de-duplicated against the orders already written.
        #[serde(default)]
        order_id_column: Option<Ident>,
        /// Which rows are still pending; without it every row of the table is.
        #[serde(default)]
        pending: Option<Pending>,
    },
}

/// BullMQ's default key prefix.
pub const DEFAULT_BULLMQ_PREFIX: &str = "bull";

fn default_bullmq_prefix() -> String {
    DEFAULT_BULLMQ_PREFIX.to_string()
}

/// The rows of an in-flight table that are still pending: `column IN (values)`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Pending {
    pub column: Ident,
    pub values: Vec<StatusValue>,
}

/// Where the sale reads its own degrade flag, and the values that mean on and off.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "source", rename_all = "snake_case", deny_unknown_fields)]
pub enum SwitchSection {
    /// A Redis key holding the flag (one for the whole sale).
    RedisKey { key: String, on: StatusValue, off: StatusValue },
    /// A row of one of the sale's tables: `flag` of the row whose `key_column` is `key`.
    /// Writing it needs an account that may UPDATE that table.
    DbRow { table: Ident, key_column: Ident, key: StatusValue, flag: Ident, on: StatusValue, off: StatusValue },
}

impl SwitchSection {
    /// The values that mean on and off.
    pub fn values(&self) -> (&StatusValue, &StatusValue) {
        match self {
            Self::RedisKey { on, off, .. } | Self::DbRow { on, off, .. } => (on, off),
        }
    }
}

impl StatusValue {
    /// The value as the sale stores it, unquoted (a Redis value, a bound SQL parameter).
    pub fn raw(&self) -> String {
        match self {
            Self::Int(i) => i.to_string(),
            Self::Text(s) => s.clone(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct RepairSection {
    #[serde(default)]
    pub rewrite: RewriteMode,
    /// The sale's own lock key, held while a repair runs.
    #[serde(default)]
    pub fence_key: Option<Template>,
}

/// `[compensation]`: how the sale's own database records a cancelled order, when Stockguard
/// may write it there.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct CompensationSection {
    /// The status the sale writes for a cancelled order. Absent: Stockguard writes nothing in
    /// the sale; an approved case ends in its CSV export.
    #[serde(default)]
    pub cancel: Option<Cancel>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Cancel {
    /// The sale's own cancelled status code (a number or a string).
    pub status: StatusValue,
}

impl CompensationSection {
    /// The first shape problem of the section against the file's `[orders]`.
    pub(super) fn problems(&self, orders: Option<&OrdersSection>) -> Result<(), String> {
        let Some(cancel) = &self.cancel else { return Ok(()) };
        let Some(orders) = orders else {
            return Err("[compensation] cancel needs an [orders] table".into());
        };
        if orders.order_id.is_none() {
            return Err("[compensation] cancel needs [orders] order_id: an order is cancelled by its own id".into());
        }
        if orders.join.is_some() {
            return Err(
                "[compensation] cancel on a status kept in a joined table is not supported: drop cancel, and the \
                 approved case ends in its export"
                    .into(),
            );
        }
        if orders.live.contains(&cancel.status) {
            return Err(format!("[compensation] cancel status {} is a live status", cancel.status));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum RewriteMode {
    /// Read only: Stockguard never writes the sale's Redis.
    #[default]
    Off,
    /// The settled drift applied as an `INCRBY`/`DECRBY`, which deductions commute with.
    Delta,
}

/// Why a file is not an adapter.
#[derive(Debug, thiserror::Error)]
pub enum AdapterFileError {
    #[error("cannot read the adapter file {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the adapter file {path} is not valid: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("the adapter file {path}{}: {problem}", at_line(*.line))]
    Invalid { path: PathBuf, line: Option<usize>, problem: String },
}

/// `, line N` when the line is known.
fn at_line(line: Option<usize>) -> String {
    line.map_or(String::new(), |n| format!(", line {n}"))
}

impl AdapterFile {
    /// Reads and checks a file.
    pub fn load(path: &Path) -> Result<Self, AdapterFileError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| AdapterFileError::Read { path: path.into(), source })?;
        Self::parse(&text, path)
    }

    /// Parses and checks a file's text (`path` only names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Self, AdapterFileError> {
        let mut file: Self = toml::from_str(text)
            .map_err(|e| AdapterFileError::Parse { path: path.into(), message: e.to_string().trim().to_string() })?;
        file.lines = FileLines::scan(text, path);
        file.problems().map_err(|problem| AdapterFileError::Invalid {
            path: path.into(),
            line: file.lines.of_problem(&problem),
            problem,
        })?;
        file.undecided = undecided_lines(text);
        Ok(file)
    }

    /// `e` with the line of this file that names what it is about, when there is one: a
    /// thing the sale lacks, or a name the sale's database refused (a table or a column).
    pub fn locate(&self, e: super::AdapterError) -> super::AdapterError {
        use super::AdapterError;
        let line = match &e {
            AdapterError::Missing(m) => self.lines.of_missing(m),
            AdapterError::Db { source, .. } => {
                quoted_names(&source.to_string()).into_iter().find_map(|name| self.lines.of_name(&name))
            }
            _ => None,
        };
        match line {
            Some(line) => AdapterError::At { path: self.lines.path().to_path_buf(), line, inner: Box::new(e) },
            None => e,
        }
    }

    /// The first shape problem, said for a person.
    fn problems(&self) -> Result<(), String> {
        if self.sale.name.trim().is_empty() {
            return Err("[sale] name is empty".into());
        }
        if self.sale.settle_ms.is_some_and(|ms| ms > MAX_SETTLE_MS) {
            return Err(format!("[sale] settle_ms is at most {MAX_SETTLE_MS} (a reading waits for it twice over)"));
        }
        if self.sale.max_inflight.is_some_and(|n| n == 0 || n > 10_000_000) {
            return Err("[sale] max_inflight must be between 1 and 10000000".into());
        }
        if self.stock.is_none() && self.sale.products.is_empty() {
            return Err("no [stock] table and no [sale] products: name one so the products can be listed".into());
        }
        if self.sale.products.iter().any(|p| p.kind() != IdKind::of(&self.sale.products)) {
            return Err("[sale] products mixes numbers and text: a sale's product ids are all of one kind".into());
        }
        if let Some(redis) = &self.redis {
            let forms = [redis.stock.is_some(), redis.stock_hash.is_some(), redis.buckets.is_some()];
            match forms.iter().filter(|f| **f).count() {
                0 => return Err("[redis] names no stock: give one of stock, stock_hash or buckets".into()),
                1 => {}
                _ => return Err("[redis] names more than one of stock, stock_hash and buckets: keep one".into()),
            }
            for (field, t) in [("stock", &redis.stock), ("buyers", &redis.buyers)] {
                if let Some(t) = t {
                    t.require_id(&format!("[redis] {field}"))?;
                }
            }
            if let Some(h) = &redis.stock_hash {
                h.key.require_id("[redis] stock_hash.key")?;
            }
            if let Some(b) = &redis.buckets {
                b.key.require_id("[redis] buckets.key")?;
                b.key.require_bucket("[redis] buckets.key")?;
                b.count.require_id("[redis] buckets.count")?;
                let named = [&b.table, &b.product, &b.bucket, &b.available].iter().filter(|c| c.is_some()).count();
                if named != 0 && named != 4 {
                    return Err(
                        "[redis] buckets: a per-bucket table needs all of table, product, bucket and available".into(),
                    );
                }
            }
        } else if self.stock.is_none() {
            return Err("neither a [stock] table nor [redis] stock: there is nothing to read".into());
        }
        if let Some(orders) = &self.orders {
            if orders.quantity.is_some() && orders.quantity_column.is_some() {
                return Err("[orders] has both quantity and quantity_column: keep one".into());
            }
            if orders.quantity.is_some_and(|q| q < 1) {
                return Err("[orders] quantity must be at least 1".into());
            }
            if orders.live.is_empty() {
                return Err("[orders] live is empty: name the statuses whose orders hold a unit".into());
            }
            if let Some(s) = orders.reserving.iter().find(|s| !orders.live.contains(s)) {
                return Err(format!("[orders] reserving status {s} is not among the live statuses"));
            }
            if let Some(s) = orders.released.iter().find(|s| orders.live.contains(s)) {
                return Err(format!("[orders] status {s} is both live and released"));
            }
            if !orders.reserving.is_empty() && self.stock.as_ref().is_none_or(|s| s.reserved.is_none()) {
                return Err("[orders] reserving statuses need a [stock] reserved column".into());
            }
        }
        if let Inflight::RedisStream { stream, group, product_field, .. } = &self.inflight {
            if self.redis.is_none() {
                return Err("[inflight] redis_stream needs a [redis] section".into());
            }
            if stream.as_str().is_empty() || group.is_empty() || product_field.is_empty() {
                return Err("[inflight] redis_stream needs stream, group and product_field".into());
            }
        }
        if let Inflight::Rabbitmq { url, queue, management_url, stats_interval_ms, .. } = &self.inflight {
            if !(url.starts_with("amqp://") || url.starts_with("amqps://")) {
                return Err(format!("[inflight] url {url:?} is not an amqp:// or amqps:// URL"));
            }
            if queue.is_empty() {
                return Err("[inflight] rabbitmq needs a queue".into());
            }
            if let Some(m) = management_url {
                if !m.starts_with("http://") {
                    return Err(format!(
                        "[inflight] management_url {:?} is not an http:// URL (the RabbitMQ management API, \
                         say http://user:pass@host:15672; https is not supported yet)",
                        crate::profile::redact(m)
                    ));
                }
            }
            if stats_interval_ms.is_some_and(|ms| !(100..=60_000).contains(&ms)) {
                return Err("[inflight] stats_interval_ms must be between 100 and 60000".into());
            }
        }
        if let Inflight::Bullmq { queue, prefix, product_field, .. } = &self.inflight {
            if self.redis.is_none() {
                return Err("[inflight] bullmq needs a [redis] section (the queue lives in the sale's Redis)".into());
            }
            if queue.is_empty() || prefix.is_empty() || product_field.is_empty() {
                return Err("[inflight] bullmq needs queue, product_field and a non-empty prefix".into());
            }
        }
        if let Inflight::Table { pending, .. } = &self.inflight {
            if self.orders.is_none() && self.stock.is_none() {
                return Err("[inflight] table needs the sale's database: name its [stock] or [orders]".into());
            }
            if pending.as_ref().is_some_and(|p| p.values.is_empty()) {
                return Err("[inflight] pending.values is empty: name the statuses of a pending row".into());
            }
        }
        if self.repair.rewrite == RewriteMode::Delta {
            match self.redis.as_ref().map(RedisSection::form) {
                Some(RedisForm::Counter(_)) => {}
                _ => return Err("[repair] rewrite = \"delta\" needs [redis] stock (a string counter)".into()),
            }
            if self.stock.is_none() {
                return Err("[repair] rewrite = \"delta\" needs a [stock] table to repair against".into());
            }
        }
        if let Some(f) = &self.repair.fence_key {
            f.require_id("[repair] fence_key")?;
        }
        self.compensation.problems(self.orders.as_ref())?;
        if let Some(switch) = &self.switch {
            let (on, off) = switch.values();
            if on.raw() == off.raw() {
                return Err(format!("[switch] on and off are the same value {on}: give two"));
            }
            if let SwitchSection::RedisKey { key, .. } = switch {
                if key.is_empty() {
                    return Err("[switch] redis_key needs a key".into());
                }
                if self.redis.is_none() {
                    return Err("[switch] redis_key needs a [redis] section (the sale's Redis)".into());
                }
            }
        }
        Ok(())
    }

    /// The sale's products have no initial stock stored: a baseline must be recorded.
    pub fn needs_baseline(&self) -> bool {
        self.stock.as_ref().is_some_and(|s| s.initial == Initial::Baseline)
    }
}

impl Serialize for Initial {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Column(c) => s.serialize_str(&format!("column:{}", c.as_str())),
            Self::Baseline => s.serialize_str("baseline"),
            Self::Fixed(n) => s.serialize_i64(*n),
        }
    }
}

impl<'de> Deserialize<'de> for Initial {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(i64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) if n >= 0 => Ok(Self::Fixed(n)),
            Raw::Int(n) => Err(serde::de::Error::custom(format!("initial stock {n} is negative"))),
            Raw::Text(t) if t == "baseline" => Ok(Self::Baseline),
            Raw::Text(t) => match t.strip_prefix("column:") {
                Some(c) => Ident::new(c).map(Self::Column).map_err(serde::de::Error::custom),
                None => Err(serde::de::Error::custom(format!(
                    "initial = {t:?}: expected \"column:<name>\", \"baseline\" or a number"
                ))),
            },
        }
    }
}

/// The names a MySQL error quotes (`Table 'shop.goods' doesn't exist`, `Unknown column
/// 'g.stock_count' in 'field list'`), each without its qualifier.
fn quoted_names(message: &str) -> Vec<String> {
    message
        .split('\'')
        .skip(1)
        .step_by(2)
        .map(|quoted| quoted.rsplit('.').next().unwrap_or(quoted).trim_matches('`').to_string())
        .filter(|name| !name.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const COURSE: &str = r#"
        [sale]
        name = "vouchers"
        [stock]
        table = "tb_seckill_voucher"
        product = "voucher_id"
        remaining = "stock"
        initial = "baseline"
        [orders]
        table = "tb_voucher_order"
        product = "voucher_id"
        quantity = 1
        status = "status"
        live = [1, 2, 3]
        released = [4]
        order_id = "id"
        [redis]
        stock = "seckill:stock:${id}"
        [inflight]
        source = "redis_stream"
        stream = "stream.orders"
        group = "g1"
        product_field = "voucherId"
        order_id_field = "id"
    "#;

    fn parse(text: &str) -> Result<AdapterFile, AdapterFileError> {
        AdapterFile::parse(text, Path::new("sale.toml"))
    }

    #[test]
    fn a_course_sale_with_a_stream_parses() {
        let file = parse(COURSE).unwrap();
        assert!(file.needs_baseline());
        assert!(matches!(file.inflight, Inflight::RedisStream { .. }));
        assert_eq!(file.orders.unwrap().live, vec![StatusValue::Int(1), StatusValue::Int(2), StatusValue::Int(3)]);
        assert_eq!(file.repair.rewrite, RewriteMode::Off, "read only unless the file says otherwise");
    }

    #[test]
    fn a_misspelt_field_is_named_with_its_line() {
        let err = parse(&COURSE.replace("remaining =", "remainig =")).unwrap_err().to_string();
        assert!(err.contains("remainig"), "{err}");
        assert!(err.contains("line"), "{err}");
    }

    #[test]
    fn a_column_name_that_is_not_an_identifier_is_refused() {
        let err = parse(&COURSE.replace(r#"remaining = "stock""#, r#"remaining = "stock`; DROP TABLE x""#))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a plain SQL name"), "{err}");
    }

    #[test]
    fn a_key_template_without_its_product_is_refused() {
        let err = parse(&COURSE.replace("seckill:stock:${id}", "seckill:stock:{id}")).unwrap_err().to_string();
        assert!(err.contains("${id}"), "{err}");
    }

    #[test]
    fn two_redis_stock_forms_are_refused() {
        let text = COURSE.replace(
            "stock = \"seckill:stock:${id}\"",
            "stock = \"s:${id}\"\nstock_hash = { key = \"h:${id}\", total = \"t\", sold = \"s\" }",
        );
        assert!(parse(&text).unwrap_err().to_string().contains("more than one"));
    }

    #[test]
    fn initial_stock_is_a_column_a_baseline_or_a_number() {
        for (text, want) in [
            ("\"column:initial_stock\"", Initial::Column(Ident::new("initial_stock").unwrap())),
            ("\"baseline\"", Initial::Baseline),
            ("500", Initial::Fixed(500)),
        ] {
            let file = parse(&COURSE.replace("\"baseline\"", text)).unwrap();
            assert_eq!(file.stock.unwrap().initial, want);
        }
        assert!(parse(&COURSE.replace("\"baseline\"", "\"initial\"")).is_err());
    }

    #[test]
    fn a_delta_repair_needs_a_string_counter() {
        let text = format!("{COURSE}\n[repair]\nrewrite = \"delta\"\n");
        assert!(parse(&text).is_ok());
        let hash = text.replace(
            "stock = \"seckill:stock:${id}\"",
            "stock_hash = { key = \"h:${id}\", total = \"t\", sold = \"s\" }",
        );
        assert!(parse(&hash).unwrap_err().to_string().contains("string counter"));
    }

    #[test]
    fn a_bullmq_queue_and_an_outbox_table_parse_with_their_defaults() {
        let bull = COURSE.replace(
            "source = \"redis_stream\"\n        stream = \"stream.orders\"\n        group = \"g1\"",
            "source = \"bullmq\"\n        queue = \"orders\"",
        );
        let file = parse(&bull).unwrap();
        assert_eq!(
            file.inflight,
            Inflight::Bullmq {
                queue: "orders".into(),
                prefix: "bull".into(),
                product_field: "voucherId".into(),
                order_id_field: Some("id".into()),
            }
        );
        let start = COURSE.find("[inflight]").unwrap();
        let table = format!(
            "{}[inflight]\nsource = \"table\"\ntable = \"requests\"\nproduct_column = \"voucher_id\"\n\
             order_id_column = \"order_id\"\npending = {{ column = \"state\", values = [\"NEW\"] }}\n",
            &COURSE[..start]
        );
        let file = parse(&table).unwrap();
        assert!(matches!(file.inflight, Inflight::Table { pending: Some(_), .. }));
        let empty = table.replace("[\"NEW\"]", "[]");
        assert!(parse(&empty).unwrap_err().to_string().contains("pending.values"));
    }

    #[test]
    fn an_unknown_inflight_source_is_named() {
        let err = parse(&COURSE.replace("source = \"redis_stream\"", "source = \"kafka\"")).unwrap_err().to_string();
        assert!(err.contains("kafka"), "{err}");
    }

    #[test]
    fn a_rabbitmq_source_takes_a_management_url_over_http_only() {
        let start = COURSE.find("[inflight]").unwrap();
        let rabbit = |extra: &str| {
            format!(
                "{}[inflight]\nsource = \"rabbitmq\"\nurl = \"amqp://g:g@h:5672/%2f\"\nqueue = \"q\"\n{extra}",
                &COURSE[..start]
            )
        };
        let file = parse(&rabbit("management_url = \"http://g:g@h:15672\"\n")).expect("parses");
        assert!(matches!(file.inflight, Inflight::Rabbitmq { management_url: Some(_), .. }));
        let err = parse(&rabbit("management_url = \"https://g:secret@h:15671\"\n")).unwrap_err().to_string();
        assert!(err.contains("not an http:// URL") && !err.contains("secret"), "{err}");
        let err = parse(&rabbit("stats_interval_ms = 0\n")).unwrap_err().to_string();
        assert!(err.contains("stats_interval_ms"), "{err}");
    }

    #[test]
    fn settle_ms_and_max_inflight_are_bounded() {
        let err = parse(&COURSE.replace("name = \"vouchers\"", "name = \"vouchers\"\nsettle_ms = 3600000"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("settle_ms is at most 60000"), "{err}");
        let err = parse(&COURSE.replace("name = \"vouchers\"", "name = \"vouchers\"\nmax_inflight = 0"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("max_inflight"), "{err}");
        let file = parse(&COURSE.replace("name = \"vouchers\"", "name = \"vouchers\"\nmax_inflight = 500")).unwrap();
        assert_eq!(file.sale.max_inflight(), 500);
    }

    #[test]
    fn a_mysql_error_names_its_table_or_column_without_its_qualifier() {
        // The apostrophe of "doesn't" opens one more: it names nothing a line gives.
        assert_eq!(quoted_names("1146 (42S02): Table 'shop.goodz' doesn't exist")[0], "goodz");
        assert_eq!(quoted_names("Unknown column 'g.stok' in 'field list'"), ["stok", "field list"]);
        assert!(quoted_names("pool timed out").is_empty());
    }

    #[test]
    fn a_shape_problem_names_the_line_it_is_on() {
        let text = COURSE.replacen("[sale]\n", "[sale]\nsettle_ms = 999999\n", 1);
        let line = text.lines().position(|l| l.contains("settle_ms")).unwrap() + 1;
        let err = AdapterFile::parse(&text, Path::new("course.toml")).unwrap_err().to_string();
        let said = format!("the adapter file course.toml, line {line}: [sale] settle_ms is at most");
        assert!(err.starts_with(&said), "{err}");
    }

    #[test]
    fn the_undecided_lines_of_a_proposal_are_kept_with_their_line_numbers() {
        let text =
            format!("# settle every UNDECIDED line, then check\n{COURSE}\n  # UNDECIDED: which statuses hold a unit\n");
        let file = parse(&text).expect("parses");
        let line = text.lines().count();
        assert_eq!(file.undecided, [UndecidedLine { line, what: "which statuses hold a unit".into() }]);
        assert!(parse(COURSE).unwrap().undecided.is_empty());
    }
}
