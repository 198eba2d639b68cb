//! Sending the requests: paced at the configured rate, at most `concurrency` outstanding,
//! every answer recorded as the buyer saw it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::conn::Conn;
use super::{LoadConfig, LoadError};

/// A request with no answer after this long counts as failed (status 0).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// One answer, as the buyer saw it.
#[derive(Debug, Clone)]
pub struct Answer {
    pub user_id: u64,
    pub product_id: u64,
    /// HTTP status, or 0 when the request failed without one (connection error, timeout).
    pub status: u16,
    pub order_no: Option<String>,
    pub error: Option<String>,
    pub latency: Duration,
}

#[derive(Debug, Default)]
pub struct Counters {
    pub sent: AtomicU64,
    pub answered: AtomicU64,
    pub accepted: AtomicU64,
}

#[derive(Deserialize)]
struct Body {
    order_no: Option<String>,
    error: Option<String>,
}

/// What a run sent and heard.
#[derive(Debug)]
pub struct Recorded {
    pub answers: Vec<Answer>,
    /// First user id of this run; buyers are `first_user .. first_user + buyers`.
    pub first_user: u64,
    pub run_tag: String,
    pub sending_time: Duration,
}

async fn futures_join(workers: Vec<tokio::task::JoinHandle<Vec<Answer>>>) -> Vec<Vec<Answer>> {
    let mut out = Vec::with_capacity(workers.len());
    for w in workers {
        out.push(w.await.expect("load worker"));
    }
    out
}

/// Sends the requests; `progress` is called about once a second with the counters.
pub async fn drive(cfg: &LoadConfig, progress: &(dyn Fn(&Counters, Duration) + Sync)) -> Result<Recorded, LoadError> {
    cfg.validate()?;
    let base = cfg.target.trim_end_matches('/').to_string();
    reqwest::get(format!("{base}/health"))
        .await
        .and_then(|r| r.error_for_status())
        .map_err(|e| LoadError::TargetDown(base.clone(), e.to_string()))?;
    let target = url::Url::parse(&base).map_err(|e| LoadError::Invalid(e.to_string()))?;
    let authority = match (target.host_str(), target.port_or_known_default()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        _ => return Err(LoadError::Invalid(format!("--target {base} has no host"))),
    };
    let path = Arc::new(format!("{}/orders", target.path().trim_end_matches('/')));

    // Fresh buyers every run, so a second run is not refused by the first one's limits.
    let first_user = 1_000_000_000 + u64::from(rand::random::<u32>()) * 1_000;
    let run_tag = format!("{:08x}", rand::random::<u32>());
    let total = cfg.buyers * cfg.products.len() as u64;
    let counters = Arc::new(Counters::default());
    let next = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let interval = Duration::from_secs_f64(1.0 / f64::from(cfg.rate));
    let deadline = started + cfg.duration;
    let products = Arc::new(cfg.products.clone());

    // A fixed pool of `concurrency` workers, each taking the next request number: no task
    // per request, so the generator spends its CPU on requests, not on bookkeeping.
    let mut workers = Vec::with_capacity(cfg.concurrency);
    for _ in 0..cfg.concurrency {
        let mut conn = Conn::new(authority.clone(), REQUEST_TIMEOUT);
        let (path, products, next, counters, run_tag) =
            (path.clone(), products.clone(), next.clone(), counters.clone(), run_tag.clone());
        let buyers = cfg.buyers;
        workers.push(tokio::spawn(async move {
            let mut answers = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    return answers;
                }
                let due = started + interval.mul_f64(i as f64);
                // Both bounds: a schedule past the deadline, and a rate the target cannot
                // keep up with (the schedule is then behind the clock).
                if due > deadline || Instant::now() > deadline {
                    return answers;
                }
                if due > Instant::now() {
                    tokio::time::sleep_until(due.into()).await;
                }
                // Interleaved: request i is buyer i / n asking for product i % n, so every
                // product sells from the start and each buyer asks once for each product.
                let n = products.len() as u64;
                let user_id = first_user + (i / n) % buyers;
                let product_id = products[(i % n) as usize];
                let body = format!(
                    r#"{{"user_id":{user_id},"product_id":{product_id},"qty":1,"idempotency_key":"load-{run_tag}-{i}"}}"#
                );
                counters.sent.fetch_add(1, Ordering::Relaxed);
                let t = Instant::now();
                let answer = match conn.post_json(&path, body).await {
                    Ok((status, body)) => {
                        let body: Option<Body> = serde_json::from_slice(&body).ok();
                        Answer {
                            user_id,
                            product_id,
                            status,
                            order_no: body.as_ref().and_then(|b| b.order_no.clone()),
                            error: body.and_then(|b| b.error),
                            latency: t.elapsed(),
                        }
                    }
                    Err(e) => Answer { user_id, product_id, status: 0, order_no: None, error: Some(stockguard_core::step::chain(&e)), latency: t.elapsed() },
                };
                counters.answered.fetch_add(1, Ordering::Relaxed);
                if answer.status == 202 {
                    counters.accepted.fetch_add(1, Ordering::Relaxed);
                }
                answers.push(answer);
            }
        }));
    }
    let mut answers = Vec::with_capacity(total as usize);
    let all = futures_join(workers);
    tokio::pin!(all);
    loop {
        tokio::select! {
            done = &mut all => {
                for part in done {
                    answers.extend(part);
                }
                break;
            }
            _ = tokio::time::sleep(Duration::from_secs(1)) => progress(&counters, started.elapsed()),
        }
    }
    let sending_time = started.elapsed();
    progress(&counters, sending_time);
    Ok(Recorded { answers, first_user, run_tag, sending_time })
}
