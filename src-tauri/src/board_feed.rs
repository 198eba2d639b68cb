//! Forwards the sampler's ticks to the window: one `board-tick` event per tick carrying every
//! product's reading and the health strip, so the window never polls. Then what a tick calls
//! for, as every reading loop does: a confirmed oversell's compensation case
//! (`compensation::on_tick`), and the tick's alerts (`alert_desk`).
//!
//! On a sale read over its adapter the tick also carries what only such a reading has: the
//! orders a buyer was told were taken that never became a row (the lost-orders panel). Its
//! health strip is our engine's (heartbeats, streams, breakers), which such a sale has not.

use std::sync::{Arc, Weak};

use chrono::{DateTime, Utc};
use serde::Serialize;
use stockguard_core::adapter::AdapterReading;
use stockguard_core::compensation::on_tick::{self, OnOversold};
use stockguard_core::compensation::over_adapter::SaleSide;
use stockguard_core::health::{self, Health};
use stockguard_core::recon::drift::ConfirmedDrift;
use stockguard_core::recon::sampler::Tick;
use stockguard_core::recon::Reading;
use stockguard_core::rewrite;
use tauri::{AppHandle, Emitter as _};
use tokio::sync::broadcast::error::RecvError;

use crate::alert_desk;
use crate::state::{Feeds, Live};
use stockguard_core::sale::Sale;

pub const TICK_EVENT: &str = "board-tick";
pub const ERROR_EVENT: &str = "board-error";

/// What the window receives each tick.
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct BoardTick {
    pub at: DateTime<Utc>,
    /// Every product, most severe first.
    pub readings: Vec<Reading>,
    /// Drifts two consecutive readings agree on.
    pub confirmed: Vec<ConfirmedDrift>,
    /// The products a rewrite repairs (`rewrite::repairs`), most severe first: what the
    /// rewrite form is filled with when nothing is picked. `None` over an adapter, whose sale
    /// the window's rewrite refuses.
    pub repairable: Option<Vec<u64>>,
    /// How long the reading took.
    pub took_ms: f64,
    /// `None` when a server did not answer the health probe (`health_error` says why).
    pub health: Option<Health>,
    pub health_error: Option<String>,
    /// A sale read over its adapter: what only its reading has.
    pub adapter: Option<AdapterBoard>,
}

/// What the board shows of a sale read over its adapter beyond the readings.
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct AdapterBoard {
    /// The sale's name (its adapter file's `[sale] name`).
    pub sale: String,
    /// False when the sale's in-flight source keeps nothing it carried (a RabbitMQ queue, a
    /// table): lost orders cannot be known there.
    pub lost_knowable: bool,
    /// The products with orders accepted and never a row, each with the sale's order ids.
    pub lost: Vec<LostOrders>,
}

#[derive(Debug, Serialize, ts_rs::TS)]
pub struct LostOrders {
    pub product_id: stockguard_core::ProductId,
    pub name: String,
    pub order_ids: Vec<String>,
}

impl AdapterBoard {
    fn of(sale: &str, readings: &[AdapterReading]) -> Self {
        let lost = readings
            .iter()
            .filter_map(|r| {
                let lost = r.lost.as_ref().filter(|l| l.count > 0)?;
                Some(LostOrders {
                    product_id: r.reading.product_id.clone(),
                    name: r.reading.name.clone(),
                    order_ids: lost.order_ids.clone(),
                })
            })
            .collect();
        let lost_knowable = readings.first().is_none_or(|r| r.lost.is_some());
        Self { sale: sale.to_string(), lost_knowable, lost }
    }
}

/// Runs until the sampler stops (its connection was replaced or closed). It holds the
/// connection weakly: replacing it drops it, which stops its sampler and then this loop.
pub fn spawn(app: AppHandle, live: Weak<Live>, mut feeds: Feeds) {
    tauri::async_runtime::spawn(async move {
        let mut on_oversold = OnOversold::default();
        loop {
            tokio::select! {
                tick = feeds.ticks.recv() => match tick {
                    Ok(tick) => {
                        let Some(live) = live.upgrade() else { break };
                        emit_tick(&app, &live, &tick).await;
                        open_cases(&app, &live, &tick, &mut on_oversold).await;
                    }
                    // The window only needs the newest tick.
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => break,
                },
                Ok(message) = feeds.errors.recv() => {
                    tracing::warn!(error = %message, "drift sampler");
                    let _ = app.emit(ERROR_EVENT, message);
                }
            }
        }
    });
}

async fn emit_tick(app: &AppHandle, live: &Live, tick: &Arc<Tick>) {
    let repairable = match &live.sale {
        Sale::Ours(_) => Some(rewrite::repairable(&tick.readings)),
        Sale::Adapter(_) => None,
    };
    let (health, health_error, adapter) = match (&live.sale, &live.latest) {
        (Sale::Ours(o), _) => match health::probe(&o.conns, &tick.readings).await {
            Ok(h) => (Some(h), None, None),
            Err(e) => (None, Some(e.to_string()), None),
        },
        (Sale::Adapter(a), Some(latest)) => {
            (None, None, Some(AdapterBoard::of(&a.sale.file.sale.name, &latest.borrow())))
        }
        (Sale::Adapter(a), None) => (None, None, Some(AdapterBoard::of(&a.sale.file.sale.name, &[]))),
    };
    let payload = BoardTick {
        at: tick.at,
        readings: tick.readings.clone(),
        confirmed: tick.confirmed.clone(),
        repairable,
        took_ms: tick.took_ms,
        health,
        health_error,
        adapter,
    };
    let _ = app.emit(TICK_EVENT, &payload);
    alert_desk::on_tick(app, live, tick, payload.health.as_ref()).await;
}

/// A confirmed oversell opens its compensation case (once per incident); one that could not
/// be opened (an account without the right, say) is said as the sampler's errors are. Over an
/// adapter the case is kept in the state database and lists the sale's own orders.
async fn open_cases(app: &AppHandle, live: &Live, tick: &Tick, on_oversold: &mut OnOversold) {
    let opened = match &live.sale {
        Sale::Ours(o) => on_oversold.observe(&o.conns.mysql, &tick.readings, &tick.confirmed).await,
        Sale::Adapter(a) => {
            let sale = &a.sale;
            let readings = live.latest.as_ref().map(|l| l.borrow().clone()).unwrap_or_default();
            match (&sale.state, &sale.mysql) {
                (Some(state), Some(db)) => {
                    let side = SaleSide { file: &sale.file, db };
                    on_oversold.observe_adapter(state, side, &readings, &tick.confirmed).await
                }
                // Without a state database (or the sale's orders) no case can be kept: the
                // alert still fires.
                _ => Vec::new(),
            }
        }
    };
    for (product, opened) in opened {
        if let Err(e) = opened {
            let message = on_tick::not_opened(&product, &e);
            tracing::warn!(error = %message, "compensation");
            let _ = app.emit(ERROR_EVENT, message);
        }
    }
}
