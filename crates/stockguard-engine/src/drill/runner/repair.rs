//! The on-call engineer's part in the failover drill: once Redis has failed over, drift seen
//! on two ticks in a row is confirmed (one tick could be a reading in mid-move) and repaired
//! by a fenced rewrite of every product, while the sale goes on.

use stockguard_core::connect::Connections;
use stockguard_core::drills::events::TickFigures;
use stockguard_core::rewrite::{self, RewriteRequest};
use tokio::task::JoinHandle;

/// Ticks in a row that drift must show to be confirmed.
const CONFIRM_TICKS: u32 = 2;

#[derive(Default)]
pub struct Repairer {
    ticks_since: u32,
    streak: u32,
    task: Option<JoinHandle<Vec<String>>>,
    /// Ticks from the failover to the drift confirmed.
    pub confirmed_after: Option<u32>,
}

impl Repairer {
    /// After each tick once Redis has failed over; answers what the rewrites came to when
    /// they are done.
    pub async fn step(&mut self, figures: &TickFigures, conns: &Connections, products: &[u64]) -> Option<Vec<String>> {
        if let Some(task) = self.task.take_if(|t| t.is_finished()) {
            return task.await.ok();
        }
        if self.confirmed_after.is_some() {
            return None;
        }
        self.ticks_since += 1;
        let drifting = figures.drift_max_abs != 0 || figures.history_lost > 0;
        self.streak = if drifting { self.streak + 1 } else { 0 };
        if self.streak >= CONFIRM_TICKS {
            self.confirmed_after = Some(self.ticks_since);
            let (conns, products) = (conns.clone(), products.to_vec());
            self.task = Some(tokio::spawn(async move {
                let mut said = Vec::new();
                for product in products {
                    let request = RewriteRequest::new(product, "drill: drift confirmed after the Redis failover");
                    said.push(match rewrite::rewrite(&conns, &request).await {
                        Ok(r) => format!(
                            "product {product}: {} (delta {:+}, drift after {})",
                            r.outcome.as_str(),
                            r.delta,
                            r.drift_after.map_or("?".to_string(), |d| d.to_string())
                        ),
                        Err(e) => format!("product {product}: rewrite failed: {e}"),
                    });
                }
                said
            }));
        }
        None
    }

    /// Nothing more to do: the repair ran, or five ticks went by without drift.
    pub fn settled(&self) -> bool {
        self.task.is_none() && (self.confirmed_after.is_some() || self.ticks_since >= 5)
    }

    /// Waits for rewrites still running.
    pub async fn finish(&mut self) -> Option<Vec<String>> {
        match self.task.take() {
            Some(task) => task.await.ok(),
            None => None,
        }
    }
}
