//! The proposal of `adapter init` as a form (the desktop's "Attach a sale"): which table is
//! stock and which column is what is left, the orders table and its product, quantity and
//! status columns, each status found with its orders counted and whether it holds a unit, the
//! Redis stock key template, the in-flight source. Every field is plain text as a person
//! types it; [`ProposalForm::to_file`] turns the form into an adapter file, each field that
//! cannot be one named ([`FieldProblem`]).

use serde::{Deserialize, Serialize};

use super::keys::StockForm;
use super::Gathered;

/// A proposal as a form. `None` sections are left out of the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ProposalForm {
    /// The sale's name in the state database (baselines, audit).
    pub name: String,
    pub stock: Option<StockFields>,
    pub orders: Option<OrdersFields>,
    pub redis: Option<RedisFields>,
    pub inflight: InflightFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StockFields {
    pub table: String,
    pub product: String,
    /// The units left.
    pub remaining: String,
    /// Units held by unpaid orders (two-phase lock).
    pub reserved: Option<String>,
    pub initial: InitialField,
    /// A display name column.
    pub name: Option<String>,
}

/// Where the initial stock comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum InitialField {
    Column {
        column: String,
    },
    /// Not stored: recorded in the state database when the sale is attached.
    Baseline,
    Fixed {
        units: i64,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct OrdersFields {
    pub table: String,
    pub product: String,
    /// The column of an order's units; `None`: one unit per order.
    pub quantity_column: Option<String>,
    pub status: String,
    /// Each status found, with its orders counted, and what it means.
    pub statuses: Vec<StatusRow>,
    pub order_id: Option<String>,
    pub created: Option<String>,
    pub user: Option<String>,
    /// The parent order holding the status, created and user columns.
    pub join: Option<JoinFields>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct JoinFields {
    pub table: String,
    pub on: String,
    pub key: String,
}

/// A status value as stored, how many orders have it, and whether they hold a unit. The
/// count is beside it so that a label that lies (every real sale stored as "invalid") is seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StatusRow {
    pub value: String,
    pub orders: i64,
    pub meaning: StatusMeaning,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum StatusMeaning {
    /// The order holds a unit.
    Live,
    /// The order holds a unit in the stock's `reserved` column (unpaid, two-phase lock).
    Reserving,
    /// The order gave its unit back (cancelled, refunded).
    Released,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RedisFields {
    pub stock: RedisStockFields,
    /// A set of buyers per product, read for information.
    pub buyers: Option<String>,
}

/// How the sale's Redis keeps a product's stock; templates carry `${id}` (and `${n}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "form", rename_all = "snake_case")]
pub enum RedisStockFields {
    /// A string counter of units left; `clamp`: below zero it counts rejected tries.
    Counter {
        template: String,
        clamp: bool,
    },
    Hash {
        key: String,
        total: String,
        sold: String,
    },
    Buckets {
        key: String,
        count: String,
    },
}

/// Where accepted orders wait before they are rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum InflightFields {
    None,
    RedisStream {
        stream: String,
        group: String,
        product_field: String,
        order_id_field: Option<String>,
    },
    Rabbitmq {
        url: String,
        queue: String,
        product_field: Option<String>,
        /// The management API, to see what consumers hold (`None`: no drift is a verdict
        /// while the queue has consumers).
        #[serde(default)]
        management_url: Option<String>,
    },
}

/// A field of the form, as the window names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Field {
    Name,
    StockTable,
    StockProduct,
    StockRemaining,
    StockReserved,
    StockInitial,
    StockName,
    OrdersTable,
    OrdersProduct,
    OrdersQuantity,
    OrdersStatus,
    OrdersStatuses,
    OrdersOrderId,
    OrdersCreated,
    OrdersUser,
    OrdersJoinTable,
    OrdersJoinOn,
    OrdersJoinKey,
    RedisStock,
    RedisHashTotal,
    RedisHashSold,
    RedisBucketCount,
    RedisBuyers,
    InflightStream,
    InflightGroup,
    InflightProductField,
    InflightOrderIdField,
    InflightUrl,
    InflightQueue,
    InflightManagementUrl,
    /// The sale's MySQL URL (no tables can be read without it).
    SaleDb,
    /// The sale's Redis URL.
    SaleRedis,
    /// The form as a whole (a rule across sections).
    Whole,
}

/// What is wrong with a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Problem {
    /// Empty where a value is needed.
    Empty,
    /// Not a plain SQL name (letters, digits, `_` and `$`).
    NotAName,
    /// A key template without `${id}` (or a bucket key without `${n}`).
    NoPlaceholder,
    NotANumber,
    NoTable,
    NoColumn,
    /// No key of the first products matches the template.
    NoKey,
    NoStream,
    NoGroup,
    NoQueue,
    /// RabbitMQ at the URL could not be asked.
    Unreachable,
    NoProducts,
    /// No status is marked as holding a unit.
    NoLiveStatus,
    /// The form breaks a rule of the adapter file (`detail` says which).
    Rule,
}

/// One field's problem: which field, what is wrong, the name it is about (a column, a key
/// template, a queue), and the whole English sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FieldProblem {
    pub field: Field,
    pub problem: Problem,
    pub name: String,
    pub detail: String,
}

impl FieldProblem {
    pub fn new(field: Field, problem: Problem, name: &str, detail: impl Into<String>) -> Self {
        Self { field, problem, name: name.to_string(), detail: detail.into() }
    }
}

impl ProposalForm {
    /// The form of what `init` gathered: each guess in its field, every status found proposed
    /// as holding a unit (only the sale's own code knows which do: a person moves the others).
    pub fn from_guesses(g: &Gathered) -> Self {
        let stock = g.schema.stock.as_ref().map(|s| StockFields {
            table: s.table.clone(),
            product: s.product.clone(),
            remaining: s.remaining.clone(),
            reserved: s.reserved.clone(),
            initial: match &s.initial {
                Some(c) => InitialField::Column { column: c.clone() },
                None => InitialField::Baseline,
            },
            name: s.name.clone(),
        });
        let orders = g.schema.orders.as_ref().map(|o| OrdersFields {
            table: o.table.clone(),
            product: o.product.clone(),
            quantity_column: o.quantity_column.clone(),
            status: o.status.clone(),
            statuses: g
                .statuses
                .iter()
                .map(|(value, orders)| StatusRow {
                    value: value.clone(),
                    orders: *orders,
                    meaning: StatusMeaning::Live,
                })
                .collect(),
            order_id: o.order_id.clone(),
            created: o.created.clone(),
            user: o.user.clone(),
            join: o.join.as_ref().map(|(table, on, key)| JoinFields {
                table: table.clone(),
                on: on.clone(),
                key: key.clone(),
            }),
        });
        let redis = g.keys.stock.as_ref().map(|form| RedisFields {
            stock: match form {
                StockForm::Counter { template, negative_seen } => {
                    RedisStockFields::Counter { template: template.clone(), clamp: *negative_seen }
                }
                StockForm::Hash { key, total, sold } => {
                    RedisStockFields::Hash { key: key.clone(), total: total.clone(), sold: sold.clone() }
                }
                StockForm::Buckets { key, count } => {
                    RedisStockFields::Buckets { key: key.clone(), count: count.clone() }
                }
            },
            buyers: g.keys.buyers.clone(),
        });
        let inflight = match &g.stream {
            Some(st) => InflightFields::RedisStream {
                stream: st.stream.clone(),
                group: st.group.clone().unwrap_or_default(),
                product_field: st.product_field.clone().unwrap_or_default(),
                order_id_field: st.order_id_field.clone(),
            },
            None => InflightFields::None,
        };
        Self { name: g.name.clone(), stock, orders, redis, inflight }
    }
}
