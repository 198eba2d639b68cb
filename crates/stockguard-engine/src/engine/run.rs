//! One engine instance: the persist consumers, the timeout closer and release relay, and the
//! HTTP API, until shutdown.
//!
//! While a server is down the background loops back off ([`super::backoff`]) from their
//! normal cadence and say so once. Each cap bounds two things: how often a dead server is
//! tried, and how late the loop notices that it is back.
//!
//! - Persist pass: 20 ms (its idle pause) up to 2 s. With the DB away, Redis keeps taking
//!   reservations, which buyers see as PROCESSING until persisted: once the DB is back they
//!   wait at most 2 s more.
//! - Product list: every 5 s, up to 15 s: while it fails the last list stays in use, and only
//!   a product added during the outage waits (three periods at most) to be persisted.
//! - Timeout close and release relay: their interval (500 ms by default) up to 5 s: a closed
//!   order's unit is back on sale in Redis at most 5 s after the server returns; orders are
//!   closed minutes after they were placed, so 5 s later is no harm.

use std::collections::HashSet;
use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;
use tracing::Instrument as _;

use super::backoff::Backoff;
use super::close::close_due_orders;
use super::consumer::{self, ConsumerConfig};
use super::http;
use super::relay::Relay;
use super::state::EngineState;
use super::switching;

/// The persist loop's pause when a pass found nothing to do; its floor when passes fail.
const IDLE: Duration = Duration::from_millis(20);
/// How often a consumer re-reads its own pending messages when nothing failed.
const RECOVER_EVERY: Duration = Duration::from_secs(2);
const PERSIST_CAP: Duration = Duration::from_secs(2);
const LIST_EVERY: Duration = Duration::from_secs(5);
const LIST_CAP: Duration = Duration::from_secs(15);
const CLOSE_CAP: Duration = Duration::from_secs(5);
const RELAY_CAP: Duration = Duration::from_secs(5);

/// Runs the consumers over every product of the instance's home (the sale's, or its drill
/// rig's) until `stop` turns true.
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
    let mut listing = Backoff::new("product list refresh", LIST_EVERY, LIST_CAP).meanwhile("keeping the last list");
    let mut listed_at: Option<Instant> = None;
    let mut persisting = Backoff::new("persist pass", IDLE, PERSIST_CAP);
    let mut last_reclaim = Instant::now();
    // Own pending messages first: after a restart, or after Redis failed between a commit
    // and its acknowledgement, they would otherwise wait for the idle reclaim. Also every
    // few seconds: a failover to a replica that had the delivery but not the acknowledgement
    // hands them back without any call of ours failing (the connection manager reconnects
    // quietly), and the guided exit waits for them (found by the redis-failover-loss drill).
    let mut recover = true;
    let mut recovered_at = Instant::now();
    while !*stop.borrow() {
        let now = Instant::now();
        if listed_at.is_none_or(|t| now.duration_since(t) > LIST_EVERY) && listing.due(now) {
            match stockguard_core::catalog::home_products(&state.pool, state.config.home).await {
                Ok(ids) => {
                    products = ids;
                    listing.succeeded(Instant::now());
                }
                Err(e) => {
                    listing.failed(now, &e);
                }
            }
            listed_at = Some(now);
        }
        for &p in &products {
            if !grouped.contains(&p) && consumer::ensure_group(&mut redis, &state.keys, p).await.is_ok() {
                grouped.insert(p);
            }
        }
        // Reclaiming walks every product; twice per claim period is often enough.
        let reclaim = last_reclaim.elapsed() >= cfg.claim_min_idle / 2;
        if reclaim {
            last_reclaim = Instant::now();
        }
        if (recover || recovered_at.elapsed() >= RECOVER_EVERY) && !products.is_empty() {
            recovered_at = Instant::now();
            match consumer::recover_own(&state.pool, &mut redis, &state.keys, &products, &cfg).await {
                Ok(_) => recover = false,
                Err(e) => tracing::debug!(error = %e, "recovering own pending messages failed; retrying"),
            }
        }
        let started = Instant::now();
        let pause = match consumer::run_pass(&state.pool, &mut redis, &state.keys, &products, &cfg, reclaim).await {
            Ok(o) => {
                persisting.succeeded(Instant::now());
                let busy =
                    !(o.persisted.is_empty() && o.duplicates.is_empty() && o.failed.is_empty() && o.clashed.is_empty());
                (!busy).then_some(IDLE)
            }
            Err(e) => {
                // Nothing is lost: unacknowledged messages stay pending and are retried.
                recover = true;
                Some(persisting.failed(started, &e))
            }
        };
        if let Some(pause) = pause {
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = stop.changed() => {}
            }
        }
    }
}

/// Closes orders past their deadline and relays releases to Redis (of the products of the
/// instance's home), until `stop`.
pub async fn run_closer_and_relay(state: EngineState, mut stop: watch::Receiver<bool>) {
    let relay = Relay::default();
    let mut redis = state.redis.clone();
    let every = state.config.close_interval;
    let mut closing = Backoff::new("timeout close pass", every, CLOSE_CAP);
    let mut relaying = Backoff::new("release relay pass", every, RELAY_CAP);
    let mut tick = tokio::time::interval(every);
    while !*stop.borrow() {
        let at = tokio::select! {
            at = tick.tick() => at,
            _ = stop.changed() => continue,
        };
        if closing.due(at) {
            match close_due_orders(&state.pool, state.config.home, chrono::Utc::now().naive_utc(), 500).await {
                Ok(_) => closing.succeeded(Instant::now()),
                Err(e) => {
                    closing.failed(at, &e);
                }
            }
        }
        if relaying.due(at) {
            match relay.run_once(&state.pool, state.config.home, &mut redis, &state.keys, 500).await {
                Ok(_) => relaying.succeeded(Instant::now()),
                Err(e) => {
                    relaying.failed(at, &e);
                }
            }
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
    // Whether "accepted" waits for a replica, decided (and logged) before the first order.
    state.vouching().await;
    let listen_addr = listener.local_addr()?.to_string();
    let (stop_tx, stop_rx) = watch::channel(false);
    // The background loops' lines name their instance (several may share a log).
    let span = tracing::info_span!("engine", instance = %state.config.instance_id);
    let switch =
        tokio::spawn(switching::run_switch(state.clone(), listen_addr, stop_rx.clone()).instrument(span.clone()));
    let consumers = state
        .config
        .consumers
        .then(|| tokio::spawn(run_consumers(state.clone(), stop_rx.clone()).instrument(span.clone())));
    let closer = tokio::spawn(run_closer_and_relay(state.clone(), stop_rx).instrument(span));
    let result = http::serve(listener, state, shutdown).await;
    let _ = stop_tx.send(true);
    if let Some(consumers) = consumers {
        let _ = consumers.await;
    }
    let _ = closer.await;
    let _ = switch.await;
    result
}

/// Persists reservations only (no order API, no closer): the queue consumers as a process of
/// their own, until `shutdown` completes. Its consumer name is the instance id, so a consumer
/// started again under the same id takes back its own pending messages first.
pub async fn consume(state: EngineState, shutdown: impl Future<Output = ()> + Send + 'static) {
    let (stop_tx, stop_rx) = watch::channel(false);
    let span = tracing::info_span!("consumer", instance = %state.config.instance_id);
    let consumers = tokio::spawn(run_consumers(state, stop_rx).instrument(span));
    shutdown.await;
    let _ = stop_tx.send(true);
    let _ = consumers.await;
}
