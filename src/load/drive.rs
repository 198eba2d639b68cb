//! Sending the requests: paced at the configured rate, at most `concurrency` outstanding,
//! every answer recorded as the buyer saw it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use tokio::sync::Semaphore;

use super::{LoadConfig, LoadError};

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

/// Sends the requests; `progress` is called about once a second with the counters.
pub async fn drive(cfg: &LoadConfig, progress: &(dyn Fn(&Counters, Duration) + Sync)) -> Result<Recorded, LoadError> {
    cfg.validate()?;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(cfg.concurrency)
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| LoadError::Invalid(e.to_string()))?;
    let base = cfg.target.trim_end_matches('/').to_string();
    client
        .get(format!("{base}/health"))
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .map_err(|e| LoadError::TargetDown(base.clone(), e.to_string()))?;

    // Fresh buyers every run, so a second run is not refused by the first one's limits.
    let first_user = 1_000_000_000 + u64::from(rand::random::<u32>()) * 1_000;
    let run_tag = format!("{:08x}", rand::random::<u32>());
    let total = cfg.buyers * cfg.products.len() as u64;
    let counters = Arc::new(Counters::default());
    let permits = Arc::new(Semaphore::new(cfg.concurrency));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Answer>();
    let started = Instant::now();
    let mut last_progress = Instant::now();
    let interval = Duration::from_secs_f64(1.0 / f64::from(cfg.rate));

    for i in 0..total {
        let due = started + interval.mul_f64(i as f64);
        if due > started + cfg.duration {
            break;
        }
        if due > Instant::now() {
            tokio::time::sleep_until(due.into()).await;
        }
        if last_progress.elapsed() >= Duration::from_secs(1) {
            progress(&counters, started.elapsed());
            last_progress = Instant::now();
        }
        let permit = permits.clone().acquire_owned().await.expect("semaphore open");
        // Buyer-major order: every buyer asks for the first product, then the next, so the
        // products sell in parallel.
        let user_id = first_user + i % cfg.buyers;
        let product_id = cfg.products[(i / cfg.buyers) as usize];
        let body = serde_json::json!({
            "user_id": user_id,
            "product_id": product_id,
            "qty": 1,
            "idempotency_key": format!("load-{run_tag}-{i}"),
        });
        let (client, url, tx, counters) = (client.clone(), format!("{base}/orders"), tx.clone(), counters.clone());
        counters.sent.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            let t = Instant::now();
            let answer = match client.post(url).json(&body).send().await {
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let body: Option<Body> = resp.json().await.ok();
                    Answer {
                        user_id,
                        product_id,
                        status,
                        order_no: body.as_ref().and_then(|b| b.order_no.clone()),
                        error: body.and_then(|b| b.error),
                        latency: t.elapsed(),
                    }
                }
                Err(e) => Answer { user_id, product_id, status: 0, order_no: None, error: Some(e.to_string()), latency: t.elapsed() },
            };
            counters.answered.fetch_add(1, Ordering::Relaxed);
            if answer.status == 202 {
                counters.accepted.fetch_add(1, Ordering::Relaxed);
            }
            let _ = tx.send(answer);
            drop(permit);
        });
    }
    drop(tx);
    let mut answers = Vec::with_capacity(total as usize);
    while let Some(a) = rx.recv().await {
        answers.push(a);
    }
    let sending_time = started.elapsed();
    progress(&counters, sending_time);
    Ok(Recorded { answers, first_user, run_tag, sending_time })
}
