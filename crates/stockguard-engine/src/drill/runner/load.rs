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
    /// Sends the schedule, then waits for every answer, and returns them.
    dispatcher: tokio::task::JoinHandle<Vec<Sent>>,
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
    ///
    /// Buyers do not wait for each other: each request goes out at its time on a connection
    /// of its own (an idle keep-alive one to its engine, or a new one), whatever the requests
    /// before it are still waiting for. A fixed set of workers, each sending its next request
    /// only once its last was answered, fell behind as soon as a fault made answers slow (an
    /// engine cut off holds each request until its 5 s timeout): CI's drills sent 72-81% of
    /// their schedule. `concurrency` is a safety cap on what is outstanding, not a pace.
    pub fn start(schedule: &Schedule, targets: Targets, concurrency: usize) -> Self {
        let (stop, stopped) = watch::channel(false);
        let seconds = Arc::new(Mutex::new(BTreeMap::new()));
        let follow_ups = Arc::new(FollowUps::default());
        let (follow_tx, follow_rx) = mpsc::unbounded_channel::<(Instant, Sent, Then)>();
        let sent = Arc::new(AtomicUsize::new(0));
        let started = Instant::now();
        let total = schedule.requests.len();
        let sender = Sender {
            targets: Arc::new(targets),
            idle: Arc::new(Mutex::new(Vec::new())),
            seconds: seconds.clone(),
            sent: sent.clone(),
            follow_tx,
            started,
        };
        let engines = sender.targets.engines.clone();
        let requests = schedule.requests.clone();
        let dispatcher = tokio::spawn(sender.dispatch(requests, concurrency.max(1), stopped));
        let follow = tokio::spawn(follow_up(follow_rx, engines, follow_ups.clone()));
        let total_us = Mutex::new(SecondAcc::new().latency_us);
        Self { stop, seconds, dispatcher, follow, follow_ups, total_us, started, sent, total }
    }

    /// Requests sent so far, of the schedule's.
    pub fn progress(&self) -> (usize, usize) {
        (self.sent.load(Ordering::Relaxed).min(self.total), self.total)
    }

    pub fn finished(&self) -> bool {
        self.dispatcher.is_finished()
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
        let answers = (&mut self.dispatcher).await.unwrap_or_default();
        let rest = self.take_seconds(u64::MAX);
        // The follow-ups end when the dispatcher's sender is gone and the queue is worked off.
        let _ = tokio::time::timeout(Duration::from_secs(15), &mut self.follow).await;
        let total = self.total_us.lock().expect("load latency");
        let ms = |q: f64| total.value_at_quantile(q) as f64 / 1000.0;
        Finished { answers, rest, p50_ms: ms(0.5), p99_ms: ms(0.99), follow_ups: self.follow_ups.clone() }
    }
}

/// What the requests of a run share: where they go, the idle connections per engine, and
/// where their answers are counted.
struct Sender {
    targets: Arc<Targets>,
    /// Keep-alive connections not in use, per engine (by index).
    idle: Arc<Mutex<Vec<Vec<Conn>>>>,
    seconds: Arc<Mutex<BTreeMap<u64, SecondAcc>>>,
    sent: Arc<AtomicUsize>,
    follow_tx: mpsc::UnboundedSender<(Instant, Sent, Then)>,
    started: Instant,
}

impl Sender {
    /// Sends each request at its time, each as a task of its own, at most `cap` outstanding;
    /// then waits for the answers.
    async fn dispatch(self, requests: Vec<Request>, cap: usize, stopped: watch::Receiver<bool>) -> Vec<Sent> {
        let this = Arc::new(self);
        let permits = Arc::new(tokio::sync::Semaphore::new(cap));
        let mut out = tokio::task::JoinSet::new();
        let mut answers = Vec::with_capacity(requests.len());
        for (i, req) in requests.into_iter().enumerate() {
            let due = this.started + req.at;
            if due > Instant::now() {
                tokio::time::sleep_until(due.into()).await;
            }
            if *stopped.borrow() {
                break;
            }
            // Only when `cap` requests are out (or this task was starved of the CPU) can a
            // request be late: sent now it would bunch late requests into a burst the
            // schedule never had, so it is counted as skipped instead.
            let permit = permits.clone().acquire_owned().await.expect("the semaphore stays open");
            if Instant::now() > due + LATE {
                let second = this.started.elapsed().as_secs();
                this.seconds
                    .lock()
                    .expect("load seconds")
                    .entry(second)
                    .or_insert_with(SecondAcc::new)
                    .figures
                    .skipped += 1;
                continue;
            }
            let one = this.clone();
            out.spawn(async move {
                let answer = one.send(i, req).await;
                drop(permit);
                answer
            });
            while let Some(done) = out.try_join_next() {
                answers.extend(done.ok());
            }
        }
        while let Some(done) = out.join_next().await {
            answers.extend(done.ok());
        }
        answers
    }

    /// Sends request `i` on an idle connection to its engine (or a new one), records the
    /// answer in its second, and gives the connection back.
    async fn send(&self, i: usize, req: Request) -> Sent {
        let targets = &self.targets;
        let engine = req.engine as usize;
        let user_id = targets.first_user + req.buyer;
        let product_id = targets.products[req.product];
        let body = format!(
            r#"{{"user_id":{user_id},"product_id":{product_id},"qty":1,"idempotency_key":"drill-{}-{i}"}}"#,
            targets.tag
        );
        let mut conn = {
            let mut idle = self.idle.lock().expect("idle connections");
            if idle.len() < targets.engines.len() {
                idle.resize_with(targets.engines.len(), Vec::new);
            }
            idle[engine].pop()
        }
        .unwrap_or_else(|| {
            Conn::new(targets.engines[engine].trim_start_matches("http://").to_string(), REQUEST_TIMEOUT)
        });
        self.sent.fetch_add(1, Ordering::Relaxed);
        let t = Instant::now();
        let (status, body) = match conn.post_json("/orders", body).await {
            Ok((status, body)) => (status, serde_json::from_slice::<Body>(&body).ok()),
            Err(_) => (0, None),
        };
        let latency = t.elapsed();
        self.idle.lock().expect("idle connections")[engine].push(conn);
        let error = body.as_ref().and_then(|b| b.error.clone());
        let order_no = body.and_then(|b| b.order_no);
        let second = self.started.elapsed().as_secs();
        {
            let mut all = self.seconds.lock().expect("load seconds");
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
            let _ = self.follow_tx.send((Instant::now() + FOLLOW_UP_AFTER, answer.clone(), req.then));
        }
        answer
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
