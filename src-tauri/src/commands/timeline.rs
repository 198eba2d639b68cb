//! The timeline screen (issue 53): what happened to the sale over a recent stretch, from the
//! records it keeps, optionally for one product. The core reads it (`timeline::read`); the
//! window lists it newest first and filters it by kind.

use std::time::Duration;

use stockguard_core::sale::Capability;
use stockguard_core::timeline::{self, Query, Span, Timeline};
use stockguard_core::ProductId;
use tauri::State;

use crate::error::DesktopError;
use crate::state::AppState;

/// The last `minutes` of the sale's timeline (the newest `limit` events, oldest first), of
/// `product` and the whole sale, or of every product.
#[tauri::command(rename_all = "snake_case")]
pub async fn timeline_read(
    state: State<'_, AppState>,
    product: Option<ProductId>,
    minutes: u32,
    limit: u32,
) -> Result<Timeline, DesktopError> {
    let live = state.live().await?;
    live.sale.require(Capability::Audit)?;
    let query = Query { span: Span::Since(Duration::from_secs(u64::from(minutes) * 60)), product, limit };
    Ok(timeline::read(&live.sale, &query).await?)
}
