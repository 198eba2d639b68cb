//! What a sale lacks that its adapter file names: a table, a column, a key, a stream's group,
//! a queue. Typed, so that `adapter check` prints it in one line and the attach form says it
//! in the field that names the thing; its `Display` is the English line.

use serde::Serialize;

/// One thing the file names that the sale does not have (or that cannot be reached).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Missing {
    /// The sale's database has no such table (or the account cannot see it).
    Table {
        table: String,
    },
    Column {
        table: String,
        column: String,
    },
    /// The file names tables but no MySQL URL was given.
    NoSaleDb,
    /// The file names keys but no Redis URL was given.
    NoSaleRedis,
    NoProducts,
    /// No key of the first products matches the template.
    KeyTemplate {
        template: String,
        products: Vec<crate::product_id::ProductId>,
    },
    Stream {
        stream: String,
    },
    Group {
        stream: String,
        group: String,
    },
    /// The stream's latest entry carries no field the file names (`product_field`,
    /// `order_id_field`: `key`); `found` are the fields it carries. Field names are
    /// case-sensitive: `VoucherId` is not `voucherId`.
    StreamField {
        stream: String,
        key: String,
        field: String,
        found: Vec<String>,
    },
    BullmqQueue {
        prefix: String,
        queue: String,
    },
    RabbitQueue {
        queue: String,
    },
    /// A line `adapter init` marked `UNDECIDED` that nobody settled.
    Undecided {
        line: usize,
        what: String,
    },
    /// RabbitMQ could not be asked (its URL is shown without a password).
    RabbitUnreachable {
        url: String,
        detail: String,
    },
    /// A `[switch]` row of the sale's table.
    Row {
        table: String,
        key_column: String,
        key: String,
    },
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Table { table } => {
                write!(f, "the sale's database has no table {table} (or this account cannot see it)")
            }
            Self::Column { table, column } => write!(f, "table {table} has no column {column}"),
            Self::NoSaleDb => f.write_str("the file names tables but no MySQL URL was given for the sale"),
            Self::NoSaleRedis => f.write_str("the file names Redis keys but no Redis URL was given for the sale"),
            Self::NoProducts => f.write_str("the sale has no products"),
            Self::KeyTemplate { template, products } => write!(
                f,
                "the key template {template} matches no key of the first products ({})",
                products.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
            ),
            Self::Stream { stream } => write!(f, "the sale's Redis has no stream {stream}"),
            Self::Group { stream, group } => write!(f, "the stream {stream} has no consumer group {group}"),
            Self::StreamField { stream, key, field, found } => {
                match found.iter().find(|n| n.eq_ignore_ascii_case(field)) {
                    Some(near) => write!(
                        f,
                        "the stream {stream}'s entries carry {near}, not {field} ([inflight] {key}; field names are \
                         case-sensitive)"
                    ),
                    None => write!(
                        f,
                        "the stream {stream}'s entries carry no field {field} ([inflight] {key}); they carry {}",
                        found.join(", ")
                    ),
                }
            }
            Self::BullmqQueue { prefix, queue } => {
                write!(f, "the sale's Redis has no BullMQ queue {queue} (no {prefix}:{queue}:* keys)")
            }
            Self::RabbitQueue { queue } => write!(f, "RabbitMQ has no queue {queue}"),
            Self::Undecided { line, what } => {
                write!(f, "line {line} is still UNDECIDED ({what}): settle it, then delete the line")
            }
            Self::RabbitUnreachable { url, detail } => write!(f, "RabbitMQ at {url}: {detail}"),
            Self::Row { table, key_column, key } => write!(f, "{table} has no row where {key_column} = {key}"),
        }
    }
}
