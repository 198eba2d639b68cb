//! What the alert desk shows of each firing alert: when it began and its open
//! acknowledgement. Plain data, read by [`super::onsets`] and written by [`super::acks`].

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::Serialize;

use super::conditions::Alert;

/// An open acknowledgement.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "AlertAcknowledgement"))]
pub struct Acknowledgement {
    pub id: u64,
    pub alert_key: String,
    pub kind: String,
    pub product_id: Option<u64>,
    /// The account that acknowledged (the server's word).
    pub acked_by: String,
    pub reason: String,
    pub acked_at: NaiveDateTime,
    pub until_at: Option<NaiveDateTime>,
}

/// An alert, when it began firing, and its open acknowledgement, if any.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AlertState {
    pub alert: Alert,
    /// When it began firing: the first reading it was seen in, kept while it fires; once it
    /// cleared, a new incident begins again (`Onsets`).
    pub since: DateTime<Utc>,
    pub acknowledged: Option<Acknowledgement>,
}
