//! Dry runs and rewrites of Redis stock for the products picked on the board.

use std::time::Duration;

use serde::Serialize;
use stockguard_core::rewrite::{rewrite_many, RewriteRequest, RewriteResult};
use stockguard_core::sale::Capability;
use tauri::State;

use crate::error::{DesktopError, ErrorWire, MessageCode, Said};
use crate::state::AppState;

/// One product's result: the rewrite's, or why it was not done.
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct RewriteItem {
    pub product_id: u64,
    pub result: Option<RewriteResult>,
    pub error: Option<ErrorWire>,
}

/// `confirmed`: the product ids the user typed again (required for each on production).
#[tauri::command(rename_all = "snake_case")]
pub async fn rewrite_products(
    state: State<'_, AppState>,
    products: Vec<u64>,
    reason: String,
    dry_run: bool,
    confirmed: Vec<u64>,
) -> Result<Vec<RewriteItem>, DesktopError> {
    if products.is_empty() {
        return Err(DesktopError::Invalid(Said::new(
            MessageCode::NoProductPicked,
            &[],
            "pick at least one product on the board",
        )));
    }
    let live = state.live().await?;
    let template = RewriteRequest { product_id: 0, reason, dry_run, confirm: None, lock_ttl: Duration::from_secs(10) };
    let results = rewrite_many(live.ours(Capability::Repair)?, &products, &template, &confirmed).await;
    Ok(products
        .into_iter()
        .zip(results)
        .map(|(product_id, r)| match r {
            Ok(result) => RewriteItem { product_id, result: Some(result), error: None },
            Err(e) => RewriteItem { product_id, result: None, error: Some(DesktopError::from(e).wire()) },
        })
        .collect())
}
