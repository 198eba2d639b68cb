//! One engine instance: the persist consumers, the timeout closer and release relay, and the
//! HTTP API, until shutdown.

use std::collections::HashSet;
use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;

use super::close::close_due_orders;
use super::consumer::{self, ConsumerConfig};
use super::http;
use super::relay::Relay;
use super::state::EngineState;
use super::switching;

/// Runs the consumers over every product of the sale until `stop` turns true.
pub async fn run_consumers(state: EngineState, mut stop: watch::Receiver<bool>) {
    let cfg = ConsumerConfig {
        name: state.config.instance_id.clone(),
        batch_size: state.config.batch_size,
        claim_min_idle: state.config.claim_min_idle,
        payment_timeout: state.config.payment_timeout,
    };
    let mut redis = state.redis.clone();
    let mut grouped: HashSet<u64> = HashSet::new();
    let mut products: Vec<u64> = Vec::new();
    let mut refreshed = tokio::time::Instant::now() - Duration::from_secs(60);
    let mut last_reclaim = tokio::time::Instant::now();
    // Own pending messages first: after a restart, or after Redis failed between a commit
    // and its acknowledgement, they would otherwise wait for the idle reclaim.
    let mut recover = true;
    while !*stop.borrow() {
        if refreshed.elapsed() > Duration::from_secs(5) {
            match stockguard_core::recon::reading::product_ids(&state.pool).await {
                Ok(ids) => products = ids,
                Err(e) => tracing::warn!(error = %e, "cannot list products; keeping the last list"),
            }
            refreshed = tokio::time::Instant::now();
        }
        for &p in &products {
            if !grouped.contains(&p) && consumer::ensure_group(&mut redis, &state.keys, p).await.is_ok() {
                grouped.insert(p);
            }
        }
        // Reclaiming walks every product; twice per claim period is often enough.
        let reclaim = last_reclaim.elapsed() >= cfg.claim_min_idle / 2;
        if reclaim {
            last_reclaim = tokio::time::Instant::now();
        }
        if recover && !products.is_empty() {
            match consumer::recover_own(&state.pool, &mut redis, &state.keys, &products, &cfg).await {
                Ok(_) => recover = false,
                Err(e) => tracing::debug!(error = %e, "recovering own pending messages failed; retrying"),
            }
        }
        let busy = match consumer::run_pass(&state.pool, &mut redis, &state.keys, &products, &cfg, reclaim).await {
            Ok(o) => {
                !(o.persisted.is_empty() && o.duplicates.is_empty() && o.failed.is_empty() && o.clashed.is_empty())
            }
            Err(e) => {
                // Nothing is lost: unacknowledged messages stay pending and are retried.
                tracing::warn!(error = %e, "persist pass failed; retrying");
                recover = true;
                false
            }
        };
        if !busy {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(20)) => {}
                _ = stop.changed() => {}
            }
        }
    }
}

/// Closes orders past their deadline and relays releases to Redis, until `stop`.
pub async fn run_closer_and_relay(state: EngineState, mut stop: watch::Receiver<bool>) {
    let relay = Relay::default();
    let mut redis = state.redis.clone();
    let mut tick = tokio::time::interval(state.config.close_interval);
    while !*stop.borrow() {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.changed() => continue,
        }
        if let Err(e) = close_due_orders(&state.pool, chrono::Utc::now().naive_utc(), 500).await {
            tracing::warn!(error = %e, "timeout close pass failed; retrying");
        }
        if let Err(e) = relay.run_once(&state.pool, &mut redis, &state.keys, 500).await {
            tracing::warn!(error = %e, "release relay pass failed; retrying");
        }
    }
}

/// Serves the API and runs the background work until `shutdown` completes; then stops all.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: EngineState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    // Know the mode before the first order: the switch may already say DB mode.
    switching::load_initial(&state, Duration::from_secs(10)).await.map_err(std::io::Error::other)?;
    // Register this start for an instance tag no other engine has (order numbers).
    state.reserver().await.map_err(std::io::Error::other)?;
    let listen_addr = listener.local_addr()?.to_string();
    let (stop_tx, stop_rx) = watch::channel(false);
    let switch = tokio::spawn(switching::run_switch(state.clone(), listen_addr, stop_rx.clone()));
    let consumers = tokio::spawn(run_consumers(state.clone(), stop_rx.clone()));
    let closer = tokio::spawn(run_closer_and_relay(state.clone(), stop_rx));
    let result = http::serve(listener, state, shutdown).await;
    let _ = stop_tx.send(true);
    let _ = consumers.await;
    let _ = closer.await;
    let _ = switch.await;
    result
}
