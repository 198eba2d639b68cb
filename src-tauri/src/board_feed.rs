//! Forwards the sampler's ticks to the window: one `board-tick` event per tick carrying every
//! product's reading and the health strip, so the window never polls. Then what a tick calls
//! for, as every reading loop does: a confirmed oversell's compensation case
//! (`compensation::on_tick`), and the tick's alerts (`alert_desk`).

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;
use stockguard_core::compensation::on_tick::{self, OnOversold};
use stockguard_core::connect::Connections;
use stockguard_core::health::{self, Health};
use stockguard_core::recon::drift::ConfirmedDrift;
use stockguard_core::recon::sampler::Tick;
use stockguard_core::recon::Reading;
use tauri::{AppHandle, Emitter as _};
use tokio::sync::broadcast::error::RecvError;

use crate::alert_desk;
use crate::state::Feeds;

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
    /// How long the reading took.
    pub took_ms: f64,
    /// `None` when a server did not answer the health probe (`health_error` says why).
    pub health: Option<Health>,
    pub health_error: Option<String>,
}

/// Runs until the sampler stops (its connection was replaced or closed).
pub fn spawn(app: AppHandle, conns: Connections, mut feeds: Feeds) {
    tauri::async_runtime::spawn(async move {
        let mut on_oversold = OnOversold::default();
        loop {
            tokio::select! {
                tick = feeds.ticks.recv() => match tick {
                    Ok(tick) => {
                        emit_tick(&app, &conns, &tick).await;
                        open_cases(&app, &conns, &tick, &mut on_oversold).await;
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

async fn emit_tick(app: &AppHandle, conns: &Connections, tick: &Arc<Tick>) {
    let (health, health_error) = match health::probe(conns, &tick.readings).await {
        Ok(h) => (Some(h), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let payload = BoardTick {
        at: tick.at,
        readings: tick.readings.clone(),
        confirmed: tick.confirmed.clone(),
        took_ms: tick.took_ms,
        health,
        health_error,
    };
    let _ = app.emit(TICK_EVENT, &payload);
    alert_desk::on_tick(app, conns, tick, payload.health.as_ref()).await;
}

/// A confirmed oversell opens its compensation case (once per incident); one that could not
/// be opened (an account without the right, say) is said as the sampler's errors are.
async fn open_cases(app: &AppHandle, conns: &Connections, tick: &Tick, on_oversold: &mut OnOversold) {
    for (product, opened) in on_oversold.observe(&conns.mysql, &tick.readings, &tick.confirmed).await {
        if let Err(e) = opened {
            let message = on_tick::not_opened(product, &e);
            tracing::warn!(error = %message, "compensation");
            let _ = app.emit(ERROR_EVENT, message);
        }
    }
}
