//! The alerts firing now, for a one-off command: two exact readings `between` apart (a drift
//! is confirmed only when both agree, the console's own rule) and the streams' backlog.

use std::time::Duration;

use super::conditions::{evaluate, Alert, Signals};
use super::AlertError;
use crate::connect::Connections;
use crate::profile::thresholds::Thresholds;
use crate::recon::drift::DriftTracker;
use crate::recon::read_products;
use crate::recon::reading::product_ids;
use crate::switch::exit::DEFAULT_STALE_AFTER;
use crate::switch::{InstanceAck, Scope};

pub async fn firing(conns: &Connections, thresholds: &Thresholds, between: Duration) -> Result<Vec<Alert>, AlertError> {
    let mut redis = conns.redis.clone();
    let mut tracker = DriftTracker::default();
    tracker.observe(&read_products(&conns.mysql, &mut redis, &conns.keys, &[]).await?);
    tokio::time::sleep(between).await;
    let readings = read_products(&conns.mysql, &mut redis, &conns.keys, &[]).await?;
    let confirmed = tracker.observe(&readings);
    let products = product_ids(&conns.mysql).await?;
    let signals = signals(conns, &products).await?;
    Ok(evaluate(&readings, &confirmed, &signals, thresholds))
}

/// The streams' backlog over `products` and the engines' open breakers, read now.
pub async fn signals(conns: &Connections, products: &[u64]) -> Result<Signals, AlertError> {
    let mut redis = conns.redis.clone();
    let backlog = crate::backlog::sample(&mut redis, &conns.keys, products).await?;
    let switch = crate::switch::status(conns, DEFAULT_STALE_AFTER).await?;
    Ok(Signals { backlog: Some(backlog.messages), breakers_open: open_breakers(&switch.ack.instances) })
}

/// The live instances whose breaker is open or half open (a stale heartbeat says nothing).
pub fn open_breakers(instances: &[InstanceAck]) -> Vec<String> {
    // The sale's own engines (home `global`): a drill's rig engines trip on purpose, and the
    // Drills screen shows them (issue 51).
    instances
        .iter()
        .filter(|i| i.live && i.home == Scope::Global && i.breaker_state != "CLOSED")
        .map(|i| i.instance_id.clone())
        .collect()
}
