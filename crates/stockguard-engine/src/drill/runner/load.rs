//! The drill's load: the [`Schedule`](super::schedule::Schedule) sent to the engines as a
//! load balancer would, every answer recorded as the buyer saw it, each second's figures
//! kept for the timeline, and the buyers' follow-ups (pay, cancel, and a look at the order's
//! status) made after their orders were accepted.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::Deserialize;
use tokio::sync::{mpsc, watch};

use super::schedule::{Request, Schedule, Then};
use crate::load::conn::Conn;
use stockguard_core::drills::events::LoadSecond;

/// A request with no answer after this long counts as failed.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// A request this far behind its time is not sent (see the worker).
const LATE: Duration = Duration::from_secs(1);
/// A buyer pays or cancels this long after the order was accepted, and looks at its status.
const FOLLOW_UP_AFTER: Duration = Duration::from_millis(1500);

/// One answer, as the buyer saw it.
#[derive(Debug, Clone)]
pub struct Sent {
    pub user_id: u64,
    pub product_id: u64,
    /// HTTP status, or 0 when no answer came (refused, reset, timed out).
    pub status: u16,
    pub order_no: Option<String>,
}

#[derive(Deserialize)]
struct Body {
    order_no: Option<String>,
    error: Option<String>,
}

struct SecondAcc {
    figures: LoadSecond,
    latency_us: Histogram<u64>,
}

impl SecondAcc {
    fn new() -> Self {
        Self {
            figures: LoadSecond::default(),
            latency_us: Histogram::new_with_bounds(1, 60_000_000, 2).expect("histogram bounds"),
        }
    }
}

/// What the buyers' follow-ups came to.
#[derive(Debug, Default)]
pub struct FollowUps {
    pub paid: AtomicU64,
    pub cancelled: AtomicU64,
    /// Status looks at accepted orders answered "no such order": must stay 0 (an accepted
    /// order is PROCESSING until persisted, then its state).
    pub status_not_found: AtomicU64,
    pub status_looks: AtomicU64,
}

/// The load, running.
pub struct LoadRun {
    stop: watch::Sender<bool>,
    seconds: Arc<Mutex<BTreeMap<u64, SecondAcc>>>,
    workers: Vec<tokio::task::JoinHandle<Vec<Sent>>>,
    follow: tokio::task::JoinHandle<()>,
    pub follow_ups: Arc<FollowUps>,
    /// Every answer's latency, merged from the seconds taken out.
    total_us: Mutex<Histogram<u64>>,
    pub started: Instant,
    sent: Arc<AtomicUsize>,
    total: usize,
}

/// What the load came to.
pub struct Finished {
    pub answers: Vec<Sent>,
    /// The seconds not yet taken out (the last ones).
    pub rest: Vec<(u64, LoadSecond)>,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub follow_ups: Arc<FollowUps>,
}

/// The ids a run's schedule is sent with.
pub struct Targets {
    pub engines: Vec<String>,
    pub products: Vec<u64>,
    pub first_user: u64,
    pub tag: String,
}

impl LoadRun {
    /// Starts sending `schedule` now, `concurrency` requests outstanding at most.
    pub fn start(schedule: &Schedule, targets: Targets, concurrency: usize) -> Self {
        let (stop, stopped) = watch::channel(false);
        let seconds = Arc::new(Mutex::new(BTreeMap::new()));
        let follow_ups = Arc::new(FollowUps::default());
        let (follow_tx, follow_rx) = mpsc::unbounded_channel::<(Instant, Sent, Then)>();
        let requests: Arc<Vec<Request>> = Arc::new(schedule.requests.clone());
        let targets = Arc::new(targets);
        let next = Arc::new(AtomicUsize::new(0));
        let sent = Arc::new(AtomicUsize::new(0));
        let started = Instant::now();
        let authorities: Arc<Vec<String>> =
            Arc::new(targets.engines.iter().map(|u| u.trim_start_matches("http://").to_string()).collect());
        let workers = (0..concurrency.max(1))
            .map(|_| {
                let (requests, targets, next, sent, seconds, stopped, follow_tx, authorities) = (
                    requests.clone(),
                    targets.clone(),
                    next.clone(),
                    sent.clone(),
                    seconds.clone(),
                    stopped.clone(),
                    follow_tx.clone(),
                    authorities.clone(),
                );
                tokio::spawn(async move {
                    let mut conns: Vec<Conn> =
                        authorities.iter().map(|a| Conn::new(a.clone(), REQUEST_TIMEOUT)).collect();
                    let mut answers = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(req) = requests.get(i) else { return answers };
                        let due = started + req.at;
                        if due > Instant::now() {
                            tokio::time::sleep_until(due.into()).await;
                        }
                        if *stopped.borrow() {
                            return answers;
                        }
                        // Behind the schedule by more than LATE: every connection is busy
                        // with slow answers. Sending it now would bunch late requests into a
                        // burst the schedule never had; it is counted as skipped instead.
                        if Instant::now() > due + LATE {
                            let second = started.elapsed().as_secs();
                            seconds.lock().expect("load seconds").entry(second).or_insert_with(SecondAcc::new).figures.skipped += 1;
                            continue;
                        }
                        let user_id = targets.first_user + req.buyer;
                        let product_id = targets.products[req.product];
                        let body = format!(
                            r#"{{"user_id":{user_id},"product_id":{product_id},"qty":1,"idempotency_key":"drill-{}-{i}"}}"#,
                            targets.tag
                        );
                        sent.fetch_add(1, Ordering::Relaxed);
                        let t = Instant::now();
                        let (status, body) = match conns[req.engine as usize].post_json("/orders", body).await {
                            Ok((status, body)) => (status, serde_json::from_slice::<Body>(&body).ok()),
                            Err(_) => (0, None),
                        };
                        let latency = t.elapsed();
                        let error = body.as_ref().and_then(|b| b.error.clone());
                        let order_no = body.and_then(|b| b.order_no);
                        let second = started.elapsed().as_secs();
                        {
                            let mut all = seconds.lock().expect("load seconds");
                            let acc = all.entry(second).or_insert_with(SecondAcc::new);
                            acc.figures.sent += 1;
                            let _ = acc.latency_us.record((latency.as_micros() as u64).max(1));
                            match (status, error.as_deref()) {
                                (202, _) => acc.figures.accepted += 1,
                                (409, Some("SOLD_OUT" | "LIMIT_REACHED")) => acc.figures.refused += 1,
                                (0, _) => *acc.figures.errors.entry("no_answer".into()).or_default() += 1,
                                (s, e) => *acc.figures.errors.entry(e.map_or_else(|| s.to_string(), str::to_string)).or_default() += 1,
                            }
                        }
                        let answer = Sent { user_id, product_id, status, order_no };
                        if status == 202 {
                            let _ = follow_tx.send((Instant::now() + FOLLOW_UP_AFTER, answer.clone(), req.then));
                        }
                        answers.push(answer);
                    }
                })
            })
            .collect();
        drop(follow_tx);
        let follow = tokio::spawn(follow_up(follow_rx, targets.engines.clone(), follow_ups.clone()));
        let total = schedule.requests.len();
        let total_us = Mutex::new(SecondAcc::new().latency_us);
        Self { stop, seconds, workers, follow, follow_ups, total_us, started, sent, total }
    }

    /// Requests sent so far, of the schedule's.
    pub fn progress(&self) -> (usize, usize) {
        (self.sent.load(Ordering::Relaxed).min(self.total), self.total)
    }

    pub fn finished(&self) -> bool {
        self.workers.iter().all(|w| w.is_finished())
    }

    /// The figures of every whole second before `now_s`, taken out of the record.
    pub fn take_seconds(&self, now_s: u64) -> Vec<(u64, LoadSecond)> {
        let mut all = self.seconds.lock().expect("load seconds");
        let later = all.split_off(&now_s);
        let done = std::mem::replace(&mut *all, later);
        let mut total = self.total_us.lock().expect("load latency");
        done.into_iter()
            .map(|(s, mut acc)| {
                let _ = total.add(&acc.latency_us);
                acc.figures.p50_ms = acc.latency_us.value_at_quantile(0.5) as f64 / 1000.0;
                acc.figures.p99_ms = acc.latency_us.value_at_quantile(0.99) as f64 / 1000.0;
                (s, acc.figures)
            })
            .collect()
    }

    /// Stops sending (requests already out are answered) and returns every answer.
    pub async fn stop(self) -> Finished {
        let _ = self.stop.send(true);
        self.finish().await
    }

    /// Waits for the schedule to be sent and answered.
    pub async fn finish(mut self) -> Finished {
        let mut answers = Vec::new();
        for w in std::mem::take(&mut self.workers) {
            answers.extend(w.await.unwrap_or_default());
        }
        let rest = self.take_seconds(u64::MAX);
        // The follow-ups end when the workers' senders are gone and the queue is worked off.
        let _ = tokio::time::timeout(Duration::from_secs(15), &mut self.follow).await;
        let total = self.total_us.lock().expect("load latency");
        let ms = |q: f64| total.value_at_quantile(q) as f64 / 1000.0;
        Finished { answers, rest, p50_ms: ms(0.5), p99_ms: ms(0.99), follow_ups: self.follow_ups.clone() }
    }
}

/// Pays or cancels as the schedule says, and looks at one accepted order in ten, on one of
/// the engines (every engine answers for every order).
async fn follow_up(
    mut queue: mpsc::UnboundedReceiver<(Instant, Sent, Then)>,
    engines: Vec<String>,
    figures: Arc<FollowUps>,
) {
    let http = reqwest::Client::builder().timeout(REQUEST_TIMEOUT).build().expect("an HTTP client builds");
    let mut looked = 0u64;
    let mut tasks = tokio::task::JoinSet::new();
    while let Some((due, sent, then)) = queue.recv().await {
        if due > Instant::now() {
            tokio::time::sleep_until(due.into()).await;
        }
        let Some(order_no) = sent.order_no.clone() else { continue };
        let engine = engines[(sent.user_id % engines.len() as u64) as usize].clone();
        looked += 1;
        let look = looked.is_multiple_of(10);
        let (http, figures) = (http.clone(), figures.clone());
        tasks.spawn(async move {
            if look {
                let url = format!("{engine}/orders/{order_no}?user_id={}", sent.user_id);
                if let Ok(r) = http.get(url).send().await {
                    figures.status_looks.fetch_add(1, Ordering::Relaxed);
                    if r.status() == reqwest::StatusCode::NOT_FOUND {
                        figures.status_not_found.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            let (verb, counter) = match then {
                Then::Wait => return,
                Then::Pay => ("pay", &figures.paid),
                Then::Cancel => ("cancel", &figures.cancelled),
            };
            // Not yet persisted (still PROCESSING) is answered 409: the buyer tries again.
            for _ in 0..5 {
                let url = format!("{engine}/orders/{order_no}/{verb}");
                let body = serde_json::json!({ "user_id": sent.user_id });
                match http.post(&url).json(&body).send().await {
                    Ok(r) if r.status().is_success() => {
                        counter.fetch_add(1, Ordering::Relaxed);
                        return;
                    }
                    _ => tokio::time::sleep(Duration::from_secs(1)).await,
                }
            }
        });
        while tasks.len() > 256 {
            tasks.join_next().await;
        }
    }
    while tasks.join_next().await.is_some() {}
}
