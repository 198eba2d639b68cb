//! What the alert desk shows of each firing alert: when it began and its open
//! acknowledgement. Plain data, read by [`super::onsets`] and written by [`super::acks`].

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::Serialize;

use super::conditions::Alert;
use crate::product_id::ProductId;

/// An open acknowledgement.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "AlertAcknowledgement"))]
pub struct Acknowledgement {
    pub id: u64,
    pub alert_key: String,
    pub kind: String,
    pub product_id: Option<ProductId>,
    /// The account that acknowledged (the server's word).
    pub acked_by: String,
    pub reason: String,
    pub acked_at: NaiveDateTime,
    pub until_at: Option<NaiveDateTime>,
}

/// A row of `alert_acks`: the product as its text and whether it is text
/// ([`ProductId::from_stored`]).
impl<'r> sqlx::FromRow<'r, sqlx::mysql::MySqlRow> for Acknowledgement {
    fn from_row(row: &'r sqlx::mysql::MySqlRow) -> Result<Self, sqlx::Error> {
        use sqlx::Row as _;
        let product: Option<String> = row.try_get("product_id")?;
        let is_text: bool = row.try_get("product_is_text")?;
        let product_id = match product {
            None => None,
            Some(text) => {
                Some(ProductId::from_stored(text.clone(), is_text).ok_or_else(|| sqlx::Error::ColumnDecode {
                    index: "product_id".into(),
                    source: format!("{text:?} is not a product number").into(),
                })?)
            }
        };
        Ok(Self {
            id: row.try_get("id")?,
            alert_key: row.try_get("alert_key")?,
            kind: row.try_get("kind")?,
            product_id,
            acked_by: row.try_get("acked_by")?,
            reason: row.try_get("reason")?,
            acked_at: row.try_get("acked_at")?,
            until_at: row.try_get("until_at")?,
        })
    }
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
