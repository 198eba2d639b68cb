//! The engine's side of the degrade switch: read it often, apply it, say so in a heartbeat;
//! escalate a tripped breaker to the shared switch; probe Redis while tripped or while the
//! switch holds the instance on the DB path.
//!
//! When the switch cannot be read in time (MySQL slow or away), the last known mode stays in
//! force: an engine never guesses a mode it was not told. A breaker trip is escalated to the
//! row of the engine's home (the global row for the sale's engines, the rig's row for a
//! drill's) so that every instance selling those products sells through the same path: one
//! instance on the DB path beside others on Redis would let Redis accept units the DB has
//! already sold. A drill's trip never reaches the sale's products.
//!
//! While the DB fails, the switch read and the heartbeat back off ([`super::backoff`]) from
//! the poll (100 ms by default) up to 1 s, and each says so once. The DB is where a mode
//! change is written, so none can be made while it is away; once it is back, a change still
//! reaches this instance within about a second (the contract's bar), and a heartbeat is
//! written well before the console calls the instance gone (3 s).

use std::time::Duration;

use tokio::sync::watch;
use tokio::time::{timeout, Instant, MissedTickBehavior};

use super::backoff::Backoff;
use super::state::EngineState;
use stockguard_core::switch::acks::{write_heartbeat, Heartbeat};
use stockguard_core::switch::{store, Mode};

/// Reads the switch until it answers (an engine does not take orders before it knows its
/// mode), applying what it read. Gives up after `patience`.
pub async fn load_initial(state: &EngineState, patience: Duration) -> Result<(), stockguard_core::switch::SwitchError> {
    let deadline = Instant::now() + patience;
    loop {
        match timeout(state.config.switch_timeout, store::read_view(&state.pool)).await {
            Ok(Ok(view)) => {
                state.apply_switch(view);
                return Ok(());
            }
            Ok(Err(e)) if Instant::now() >= deadline => return Err(e),
            _ if Instant::now() >= deadline => {
                return Err(stockguard_core::switch::SwitchError::ReadTimedOut(patience))
            }
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

const SWITCH_READ_CAP: Duration = Duration::from_secs(1);
const HEARTBEAT_CAP: Duration = Duration::from_secs(1);

/// Polls the switch, writes heartbeats, handles the breaker, until `stop`.
pub async fn run_switch(state: EngineState, listen_addr: String, mut stop: watch::Receiver<bool>) {
    let cfg = state.config.clone();
    let started_at = chrono::Utc::now().naive_utc();
    let mut tick = tokio::time::interval(cfg.switch_poll);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut last_beat: Option<(u64, Mode, &'static str)> = None;
    let mut beat_at = Instant::now();
    let mut probed_at = Instant::now();
    let mut escalated = false;
    // The newest revision whose older-mode requests have all finished: what we report.
    let mut applied = state.switch_view().revision;
    let mut reading =
        Backoff::new("degrade switch read", cfg.switch_poll, SWITCH_READ_CAP).meanwhile("keeping the last known mode");
    let mut beating = Backoff::new("heartbeat write", cfg.switch_poll, HEARTBEAT_CAP);
    // The escalation is retried at every wake, as ever: until the trip is in the shared
    // switch this instance sells through the DB beside others on Redis. Only its log
    // follows the backoff's policy (floor = cap: no wait grows).
    let mut escalating = Backoff::new("breaker escalation", cfg.switch_poll, cfg.switch_poll)
        .meanwhile("this instance stays on the DB path");
    let late = |t: Duration| format!("no answer within {t:?}");
    while !*stop.borrow() {
        // When this wake was due: a tick's own instant, so that backing off by k polls skips
        // exactly k - 1 ticks.
        let at = tokio::select! {
            at = tick.tick() => at,
            _ = state.tripped.notified() => Instant::now(),
            _ = stop.changed() => continue,
        };
        if reading.due(at) {
            match timeout(cfg.switch_timeout, store::read_view(&state.pool)).await {
                Ok(Ok(view)) => {
                    state.apply_switch(view);
                    reading.succeeded(Instant::now());
                }
                Ok(Err(e)) => {
                    reading.failed(at, &e);
                }
                Err(_) => {
                    reading.failed(at, &late(cfg.switch_timeout));
                }
            }
        }

        if state.breaker.is_tripped() {
            if !escalated {
                let why = state.breaker.report().reason.unwrap_or_default();
                let escalation = store::escalate_breaker(&state.pool, cfg.home, &cfg.instance_id, &why);
                match timeout(cfg.switch_timeout, escalation).await {
                    Ok(Ok(_)) => {
                        escalated = true;
                        escalating.succeeded(Instant::now());
                    }
                    Ok(Err(e)) => {
                        escalating.failed(at, &e);
                    }
                    Err(_) => {
                        escalating.failed(at, &late(cfg.switch_timeout));
                    }
                }
            }
            if probed_at.elapsed() >= state.breaker.config().probe_interval {
                probed_at = Instant::now();
                let mut redis = state.redis.clone();
                let ping = timeout(cfg.redis_timeout, redis::cmd("PING").query_async::<String>(&mut redis)).await;
                state.breaker.record_probe(matches!(ping, Ok(Ok(_))));
            }
            let home = state.switch_view().home_row(cfg.home);
            if state
                .breaker
                .close_after_exit(home.is_some_and(|r| r.mode == Mode::Normal), home.map_or(0, |r| r.revision))
            {
                escalated = false;
                tracing::info!(instance = %cfg.instance_id, "breaker closed after the guided exit: back on Redis");
            }
        } else if state.switch_view().home_mode(cfg.home) != Mode::Normal
            && probed_at.elapsed() >= state.breaker.config().probe_interval
        {
            // On the DB path without having tripped (its home's switch took it off Redis, by
            // hand or after another instance's breaker tripped): no order calls Redis, so
            // only a probe finds out whether this instance could go back. Failed probes count
            // like failed orders and trip the breaker, so the heartbeat says OPEN and the
            // guided exit waits for this instance too.
            probed_at = Instant::now();
            let mut redis = state.redis.clone();
            let _ = state.redis_call(redis::cmd("PING").query_async::<String>(&mut redis)).await;
        }

        let view = state.switch_view();
        if view.revision != applied {
            // Wait out the requests admitted under the old mode (bounded: a request stuck
            // behind a slow DB must not stop heartbeats; the next tick tries again).
            if timeout(cfg.switch_timeout, state.admission.write()).await.is_ok() {
                applied = view.revision;
            }
        }
        let breaker = state.breaker.report();
        let now = (applied, state.home_mode(), breaker.state);
        if (last_beat != Some(now) || beat_at.elapsed() >= cfg.heartbeat_every) && beating.due(at) {
            let hb = Heartbeat {
                instance_id: cfg.instance_id.clone(),
                listen_addr: listen_addr.clone(),
                home: cfg.home.scope(),
                started_at,
                applied_revision: applied,
                effective_mode: now.1,
                breaker,
                accepted_guarantee: Some(state.vouching().await.guarantee()),
            };
            match timeout(cfg.switch_timeout, write_heartbeat(&state.pool, &hb)).await {
                Ok(Ok(())) => {
                    last_beat = Some(now);
                    beat_at = Instant::now();
                    beating.succeeded(beat_at);
                }
                Ok(Err(e)) => {
                    beating.failed(at, &e);
                }
                Err(_) => {
                    beating.failed(at, &late(cfg.switch_timeout));
                }
            }
        }
    }
}
