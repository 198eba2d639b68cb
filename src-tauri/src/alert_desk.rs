//! Alerts on the desktop. Each board tick the core says what fires ([`alerts::evaluate`] over
//! the tick's reading, its confirmed drifts, the backlog and the engines' breakers, with the
//! profile's thresholds), acknowledgements whose alert cleared or expired close themselves
//! ([`acks::settle`], audited), and then:
//! - the window gets one `alerts` event: every firing alert with when it began (its first
//!   tick, kept while it fires: [`alerts::Onsets`]) and its acknowledgement;
//! - the tray shows how many fire unacknowledged (`tray.rs`), and a picked entry opens the
//!   product of the alert if it still fires ([`firing_product`]);
//! - an alert that starts firing unacknowledged raises one desktop notification
//!   (`notify.rs`). It notifies again only once it cleared and came back, or once its
//!   acknowledgement ran out: a forgotten acknowledgement never hides the next incident.

use std::collections::HashSet;
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde::Serialize;
use stockguard_core::action::Action;
use stockguard_core::alerts::{self, acks, Alert, AlertState, Onsets, Signals};
use stockguard_core::health::Health;
use stockguard_core::lang::Lang;
use stockguard_core::recon::sampler::Tick;
use tauri::{AppHandle, Emitter as _, Manager as _};

use crate::state::Live;
use crate::{notify, tray};

pub const ALERTS_EVENT: &str = "alerts";
/// New alerts in one tick up to this many notify one by one; more notify once, together.
const NOTIFY_ONE_BY_ONE: usize = 5;

/// What the window receives each tick, and after an acknowledgement.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct AlertsUpdate {
    pub at: DateTime<Utc>,
    /// Every firing alert, with its open acknowledgement if someone took it.
    pub alerts: Vec<AlertState>,
    /// Why the acknowledgements could not be read or settled (the alerts still show).
    pub error: Option<String>,
}

/// The alerts the app last saw, which ones it notified, and the window's language (the
/// notifications and the tray speak it).
pub struct AlertDesk {
    inner: Mutex<Inner>,
}

struct Inner {
    firing: Vec<Alert>,
    /// When each of them began firing (kept from tick to tick).
    onsets: Onsets,
    latest: Option<AlertsUpdate>,
    /// Alerts notified while unacknowledged and still firing.
    notified: HashSet<String>,
    /// What the tray shows (the unacknowledged keys, in a language), to rebuild its menu only
    /// when that changes.
    tray_shown: Option<(Vec<String>, Lang)>,
    lang: Lang,
    last_error: Option<String>,
}

impl Default for AlertDesk {
    fn default() -> Self {
        Self {
            inner: Mutex::new(Inner {
                firing: Vec::new(),
                onsets: Onsets::default(),
                latest: None,
                notified: HashSet::new(),
                tray_shown: None,
                lang: Lang::En,
                last_error: None,
            }),
        }
    }
}

impl AlertDesk {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The alerts firing at the last tick: what an acknowledgement may name.
    pub fn firing(&self) -> Vec<Alert> {
        self.lock().firing.clone()
    }

    /// The alerts firing in the reading made `at`: what an acknowledgement may name, and when
    /// each began.
    fn saw(&self, firing: &[Alert], at: DateTime<Utc>) {
        let mut inner = self.lock();
        inner.firing = firing.to_vec();
        inner.onsets.observe(firing, at);
    }

    pub fn latest(&self) -> Option<AlertsUpdate> {
        self.lock().latest.clone()
    }

    pub fn set_language(&self, lang: Lang) {
        self.lock().lang = lang;
    }

    /// Forgets the previous connection's alerts.
    pub fn reset(&self) {
        let mut inner = self.lock();
        inner.firing.clear();
        inner.onsets = Onsets::default();
        inner.latest = None;
        inner.notified.clear();
    }
}

/// The product of the alert `key` if it fires now (`None`: it cleared, or it is about the
/// whole sale): what picking it in the tray opens ([`tray::build`] is given this).
pub fn firing_product(app: &AppHandle, key: &str) -> Option<stockguard_core::ProductId> {
    app.state::<AlertDesk>().firing().into_iter().find(|a| a.key == key).and_then(|a| a.product_id)
}

/// One tick: evaluate, settle, publish. On a sale read over its adapter the backlog and the
/// breakers are our engine's signals it has not (`health` is `None` there).
pub async fn on_tick(app: &AppHandle, live: &Live, tick: &Tick, health: Option<&Health>) {
    let signals = Signals {
        backlog: health.map(|h| h.stream_backlog),
        breakers_open: health.map(|h| h.breakers_open.clone()).unwrap_or_default(),
    };
    let firing = alerts::evaluate(&tick.readings, &tick.confirmed, &signals, &live.settings.thresholds);
    app.state::<AlertDesk>().saw(&firing, tick.at);
    let mut error = None;
    // Closing is a write: only a profile that may acknowledge does it (the headless watcher
    // with --settle-acknowledgements does it for everyone else).
    if let (Ok(()), Some(desk)) = (live.settings.may(Action::AcknowledgeAlert), live.alert_acks()) {
        match acks::settle_at(desk, &firing, &tick.readings).await {
            Ok(closed) => {
                for (ack, why) in closed {
                    tracing::info!(alert = %ack.alert_key, acked_by = %ack.acked_by, why, "acknowledgement closed");
                }
            }
            Err(e) => error = Some(format!("acknowledgements could not be closed: {e}")),
        }
    }
    publish(app, live, tick.at, firing, error).await;
}

/// Reads the acknowledgements of `firing`, then tells the window, the tray and the desktop.
pub async fn publish(app: &AppHandle, live: &Live, at: DateTime<Utc>, firing: Vec<Alert>, error: Option<String>) {
    let onsets = app.state::<AlertDesk>().lock().onsets.clone();
    let (alerts, error) = match live.alert_acks() {
        Some(desk) => match acks::states_at(desk, &firing, &onsets).await {
            Ok(states) => (states, error),
            Err(e) => (onsets.unacknowledged(&firing), Some(format!("acknowledgements could not be read: {e}"))),
        },
        None => (
            onsets.unacknowledged(&firing),
            Some("acknowledgements need the state database: this adapter sale has none".to_string()),
        ),
    };
    let update = AlertsUpdate { at, alerts, error };
    let desk = app.state::<AlertDesk>();
    let (fresh, tray_changed, lang) = {
        let mut inner = desk.lock();
        if update.error != inner.last_error {
            if let Some(e) = &update.error {
                tracing::warn!(error = %e, "alerts");
            }
            inner.last_error = update.error.clone();
        }
        let unacked: Vec<&Alert> =
            update.alerts.iter().filter(|s| s.acknowledged.is_none()).map(|s| &s.alert).collect();
        // A set: a sale of 5,000 products may have as many alerts.
        let firing_keys: HashSet<&str> = unacked.iter().map(|a| a.key.as_str()).collect();
        inner.notified.retain(|key| firing_keys.contains(key.as_str()));
        let fresh: Vec<Alert> =
            unacked.iter().filter(|a| !inner.notified.contains(&a.key)).map(|a| (*a).clone()).collect();
        inner.notified.extend(fresh.iter().map(|a| a.key.clone()));
        let shown = Some((unacked.iter().map(|a| a.key.clone()).collect(), inner.lang));
        let tray_changed = shown != inner.tray_shown;
        inner.tray_shown = shown;
        inner.latest = Some(update.clone());
        (fresh, tray_changed, inner.lang)
    };
    let unacked: Vec<Alert> =
        update.alerts.iter().filter(|s| s.acknowledged.is_none()).map(|s| s.alert.clone()).collect();
    if tray_changed {
        tray::show(app, &unacked, lang);
    }
    // A burst (a sale connected to with many incidents, a shard lost under thousands of
    // products) is one notification saying how many, not a notification per product.
    if fresh.len() > NOTIFY_ONE_BY_ONE {
        notify::raise_many(app, fresh.len(), lang);
    } else {
        for alert in &fresh {
            notify::raise(app, alert, lang);
        }
    }
    let _ = app.emit(ALERTS_EVENT, &update);
}
