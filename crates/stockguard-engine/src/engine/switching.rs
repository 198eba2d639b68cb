//! The engine's side of the degrade switch: read it often, apply it, say so in a heartbeat;
//! escalate a tripped breaker to the shared switch; probe Redis while tripped or while the
//! switch holds the instance on the DB path.
//!
//! When the switch cannot be read in time (MySQL slow or away), the last known mode stays in
//! force: an engine never guesses a mode it was not told. A breaker trip is escalated to the
//! global row so that every instance sells through the same path: one instance on the DB
//! path beside others on Redis would let Redis accept units the DB has already sold.

use std::time::Duration;

use tokio::sync::watch;
use tokio::time::{timeout, Instant, MissedTickBehavior};

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
    let mut warned_at: Option<Instant> = None;
    let mut warn = |what: &str, error: String| {
        // One line per few seconds: a slow MySQL must not also flood the log.
        if warned_at.is_none_or(|t| t.elapsed() > Duration::from_secs(5)) {
            tracing::warn!(instance = %cfg.instance_id, error, "{what}; keeping the last known mode");
            warned_at = Some(Instant::now());
        }
    };
    while !*stop.borrow() {
        tokio::select! {
            _ = tick.tick() => {}
            _ = state.tripped.notified() => {}
            _ = stop.changed() => continue,
        }
        match timeout(cfg.switch_timeout, store::read_view(&state.pool)).await {
            Ok(Ok(view)) => {
                state.apply_switch(view);
            }
            Ok(Err(e)) => warn("cannot read the degrade switch", e.to_string()),
            Err(_) => warn("the degrade switch did not answer in time", format!("{:?}", cfg.switch_timeout)),
        }

        if state.breaker.is_tripped() {
            if !escalated {
                let why = state.breaker.report().reason.unwrap_or_default();
                match timeout(cfg.switch_timeout, store::escalate_breaker(&state.pool, &cfg.instance_id, &why)).await {
                    Ok(Ok(_)) => escalated = true,
                    Ok(Err(e)) => warn("cannot escalate the breaker trip", e.to_string()),
                    Err(_) => warn("escalating the breaker trip timed out", String::new()),
                }
            }
            if probed_at.elapsed() >= state.breaker.config().probe_interval {
                probed_at = Instant::now();
                let mut redis = state.redis.clone();
                let ping = timeout(cfg.redis_timeout, redis::cmd("PING").query_async::<String>(&mut redis)).await;
                state.breaker.record_probe(matches!(ping, Ok(Ok(_))));
            }
            let view = state.switch_view();
            if state.breaker.close_after_exit(view.global == Some(Mode::Normal), view.global_revision) {
                escalated = false;
                tracing::info!(instance = %cfg.instance_id, "breaker closed after the guided exit: back on Redis");
            }
        } else if state.switch_view().global.is_some_and(|m| m != Mode::Normal)
            && probed_at.elapsed() >= state.breaker.config().probe_interval
        {
            // On the DB path without having tripped (the global switch took it off Redis, by
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
        let now = (applied, state.global_mode(), breaker.state);
        if last_beat != Some(now) || beat_at.elapsed() >= cfg.heartbeat_every {
            let hb = Heartbeat {
                instance_id: cfg.instance_id.clone(),
                listen_addr: listen_addr.clone(),
                started_at,
                applied_revision: applied,
                effective_mode: now.1,
                breaker,
            };
            match timeout(cfg.switch_timeout, write_heartbeat(&state.pool, &hb)).await {
                Ok(Ok(())) => {
                    last_beat = Some(now);
                    beat_at = Instant::now();
                }
                Ok(Err(e)) => warn("cannot write the heartbeat", e.to_string()),
                Err(_) => warn("the heartbeat write timed out", String::new()),
            }
        }
    }
}
