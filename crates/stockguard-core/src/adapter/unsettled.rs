//! Why a product's reading over an adapter is no verdict: a leaf type the reading, the repair
//! and the doors' text all use ([`super::reading`]'s rule says when each applies).

use serde::Serialize;

/// Why a reading is no verdict: what may be in flight that it cannot see or attribute, or a
/// product that moved. JSON: `{"why": "held", "messages": 3}` and so on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum Unsettled {
    /// Its figures (Redis, the rows, what waits in flight) moved between the two passes.
    Moved,
    /// Units wait in flight that name no product (a queue's ready messages, entries without
    /// the product field).
    Unattributed { units: i64 },
    /// Entries in flight name no order, so they cannot be told from the rows they become.
    Anonymous { entries: i64 },
    /// A queue's consumers hold messages unacknowledged (the management API's figure).
    Held { messages: i64 },
    /// A queue has consumers and no management API is named: what they hold cannot be seen.
    HeldUnseen { consumers: i64 },
    /// The management API does not describe the queue yet, and it has consumers.
    StatsNotYet { consumers: i64 },
    /// The management API's figures read may be older than the reading's first pass (only a
    /// drift asks for figures that fresh: the reading then reads again, later).
    StatsStale,
    /// A backlog past `[sale] max_inflight` was not read.
    Beyond { depth: Option<i64>, bound: i64 },
}

impl std::fmt::Display for Unsettled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Moved => write!(f, "it moved between the reading's two passes"),
            Self::Unattributed { units } => write!(f, "{units} in flight name no product"),
            Self::Anonymous { entries } => write!(f, "{entries} in flight name no order"),
            Self::Held { messages } => write!(f, "consumers hold {messages} messages unacknowledged"),
            Self::HeldUnseen { consumers } => write!(
                f,
                "messages held by the queue's {consumers} consumer(s) cannot be seen: name [inflight] management_url"
            ),
            Self::StatsNotYet { consumers } => write!(
                f,
                "RabbitMQ's statistics do not describe the queue yet and it has {consumers} consumer(s): what they \
                 hold cannot be seen"
            ),
            Self::StatsStale => write!(f, "RabbitMQ's figures may be older than the reading: read again"),
            Self::Beyond { depth: Some(d), bound } => {
                write!(f, "{d} in flight, past the {bound} a reading reads ([sale] max_inflight)")
            }
            Self::Beyond { depth: None, bound } => {
                write!(f, "more than {bound} in flight, past what a reading reads ([sale] max_inflight)")
            }
        }
    }
}
