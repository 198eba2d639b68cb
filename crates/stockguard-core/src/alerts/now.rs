//! The alerts firing now, for a one-off command: two exact readings `between` apart (a drift
//! is confirmed only when both agree, the console's own rule) and the streams' backlog.

use std::time::Duration;

use super::conditions::{evaluate, Alert, Thresholds};
use super::AlertError;
use crate::connect::Connections;
use crate::recon::read_products;
use crate::recon::reading::product_ids;
use crate::recon::sampler::DriftTracker;

pub async fn firing(conns: &Connections, thresholds: &Thresholds, between: Duration) -> Result<Vec<Alert>, AlertError> {
    let mut redis = conns.redis.clone();
    let mut tracker = DriftTracker::default();
    tracker.observe(&read_products(&conns.mysql, &mut redis, &conns.keys, &[]).await?);
    tokio::time::sleep(between).await;
    let readings = read_products(&conns.mysql, &mut redis, &conns.keys, &[]).await?;
    let confirmed = tracker.observe(&readings);
    let products = product_ids(&conns.mysql).await?;
    let backlog = crate::backlog::sample(&mut redis, &conns.keys, &products).await?;
    Ok(evaluate(&readings, &confirmed, Some(backlog.messages), thresholds))
}
