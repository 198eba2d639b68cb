//! Injecting and restoring the fault timeline's steps: link faults through the proxy API
//! (held under a lease, so a dead runner leaves none behind), process faults on the rig's own
//! processes, and the console-side faults (a rewrite holder paused past its lock, unpaid
//! orders all due at once).

use std::sync::Arc;
use std::time::Duration;

use stockguard_core::connect::Connections;
use stockguard_core::drills::plan::{Action, FaultStep, Target};
use stockguard_core::rewrite::{self, Outcome, RewriteRequest};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

use super::rig::{mysql_link, redis_link, Rig};
use super::RunnerError;
use crate::drill::client::{Held, HeldFault};
use crate::drill::toxics::{Kind, Stream, Toxic};

/// Units the lock-holder drill adds to Redis first, so the paused holder has a delta to
/// write: a stale write would show as that much drift the other way.
const HOLDER_DRIFT: i64 = 5;

/// A black hole holds replies this long: longer than any drill, ended by its restore.
const STALL_MS: u64 = 3_600_000;

/// A fault in force, and what ends it.
pub enum Active {
    Links(Vec<Held>),
    /// Processes stopped (SIGSTOP): continued on restore. `(consumers, index)`.
    Stopped(Vec<(bool, usize)>),
    /// Processes killed: started again on restore.
    Killed(Vec<(bool, usize)>),
    /// The paused rewrite holder's second half, run on restore after its successor's rewrite.
    Holder(Box<rewrite::Holder>, stockguard_core::recon::Reading, JoinHandle<String>),
    /// The failover drill's replica lagging: the failover itself happens on restore.
    Failover,
    /// Unpaid orders made due at once: how many (a one-off, nothing to end).
    MadeDue(u64),
}

impl Active {
    /// What the fault did on being injected that proves it took effect, when that is known at
    /// once: a rewrite holder paused holding its lock, unpaid orders made due. A link or
    /// process fault shows its effect in the run's figures instead (see the verdict).
    pub fn took_effect_at_once(&self) -> Option<String> {
        match self {
            Active::Holder(..) => Some("a rewrite holder paused past its lock".into()),
            Active::MadeDue(n) if *n > 0 => Some(format!("{n} unpaid orders made due at once")),
            _ => None,
        }
    }
}

/// What a fault came to, beyond its being injected and restored.
#[derive(Debug, Default)]
pub struct Outcomes {
    /// Writes a paused rewrite holder got through after its lock expired: must be 0.
    pub stale_writes: u64,
}

fn toxic(step: &FaultStep) -> HeldFault {
    let kind = match step.action {
        Action::Latency => Kind::Latency { latency: step.latency_ms, jitter: 0 },
        // A partition, as TCP lives it: nothing comes back until it heals, then everything
        // held does. (Toxiproxy's `timeout` toxic drops the bytes instead, which no TCP
        // connection does; a client that then waits for replies to dropped requests is
        // stuck in a way no real partition makes it.)
        Action::Blackhole => Kind::Latency { latency: STALL_MS, jitter: 0 },
        Action::ResetPeer => Kind::ResetPeer { timeout: step.latency_ms },
        Action::Bandwidth => Kind::Bandwidth { rate: step.rate_kb },
        _ => return HeldFault::Disabled,
    };
    // Latency, stalls and bandwidth act on the replies; a reset on whatever comes first.
    let stream = if step.action == Action::ResetPeer { Stream::Upstream } else { Stream::Downstream };
    // Named for the step, so two steps' toxics on one link do not replace each other.
    let slug: String = step.name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    HeldFault::Toxic(Toxic { name: format!("drill-{slug}-{}", kind.type_name()), kind, stream, toxicity: 1.0 })
}

fn chosen(step: &FaultStep, count: usize) -> Vec<usize> {
    if step.engines.is_empty() {
        (0..count).collect()
    } else {
        step.engines.iter().map(|e| *e as usize - 1).collect()
    }
}

/// Puts `step` in force.
pub async fn inject(
    step: &FaultStep,
    rig: &Arc<Mutex<Rig>>,
    conns: &Connections,
    renew_every: Duration,
) -> Result<Active, RunnerError> {
    let mut rig_now = rig.lock().await;
    match step.target {
        Target::Redis | Target::Mysql => {
            let api = rig_now.api.clone();
            let mut held = Vec::new();
            for i in chosen(step, rig_now.engines.len()) {
                let index = rig_now.engines[i].index;
                let link = if step.target == Target::Redis { redis_link(index) } else { mysql_link(index) };
                held.push(api.hold(&link, toxic(step), renew_every).await?);
            }
            Ok(Active::Links(held))
        }
        Target::Engine | Target::Consumers => {
            let consumers = step.target == Target::Consumers;
            let count = if consumers { rig_now.consumers.len() } else { rig_now.engines.len() };
            let which: Vec<(bool, usize)> = chosen(step, count).into_iter().map(|i| (consumers, i)).collect();
            for &(c, i) in &which {
                let proc = if c { &mut rig_now.consumers[i] } else { &mut rig_now.engines[i] };
                match step.action {
                    Action::Kill => proc.kill().await,
                    _ => proc.signal(true),
                }
            }
            Ok(if step.action == Action::Kill { Active::Killed(which) } else { Active::Stopped(which) })
        }
        Target::Rewrite => {
            let product = rig_now.products[0];
            drop(rig_now);
            pause_holder(conns, product, step).await
        }
        Target::PaymentDeadline => {
            let ids = rig_now.products.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
            let due = chrono::Utc::now().naive_utc() - chrono::Duration::seconds(1);
            let made_due = sqlx::query(&format!(
                "UPDATE orders SET pay_deadline = ? WHERE status = 'WAIT_PAY' AND product_id IN ({ids})"
            ))
            .bind(due)
            .execute(&conns.mysql)
            .await?;
            Ok(Active::MadeDue(made_due.rows_affected()))
        }
        Target::RedisMaster => {
            rig_now
                .private_redis
                .as_ref()
                .ok_or_else(|| RunnerError::Rig("this rig has no Redis of its own to fail over".into()))?
                .lag()
                .await?;
            Ok(Active::Failover)
        }
    }
}

/// The first half of the lock-holder fault: Redis pushed off by a few units, a rewrite that
/// takes its lock (a TTL shorter than the pause), reads, and stalls.
async fn pause_holder(conns: &Connections, product: u64, step: &FaultStep) -> Result<Active, RunnerError> {
    let mut redis = conns.redis.clone();
    let _: i64 = redis::cmd("INCRBY").arg(conns.keys.stock(product)).arg(HOLDER_DRIFT).query_async(&mut redis).await?;
    let ttl = Duration::from_secs_f64((step.for_s / 4.0).max(0.5));
    let request =
        RewriteRequest { lock_ttl: ttl, ..RewriteRequest::new(product, "drill: lock holder paused past its lock") };
    let holder = rewrite::begin(conns, &request)
        .await?
        .ok_or_else(|| RunnerError::Rig("the rewrite lock is already held by someone else".into()))?;
    let reading = rewrite::read(conns, &holder).await?;
    // While this holder stalls, a second rewrite takes the expired lock and repairs. Under
    // load a rewrite may find Redis moving on every attempt, or the lock not yet expired: it
    // tries again (its outcome goes on the timeline).
    let second = RewriteRequest::new(product, "drill: second rewrite while the first holder is paused");
    let conns2 = conns.clone();
    let successor = tokio::spawn(async move {
        tokio::time::sleep(ttl + Duration::from_millis(200)).await;
        let mut said = String::new();
        for _ in 0..10 {
            said = match rewrite::rewrite(&conns2, &second).await {
                Ok(r) if matches!(r.outcome, Outcome::Applied | Outcome::Rebuilt | Outcome::Noop) => {
                    return format!(
                        "second rewrite {} (delta {:+}, fence {})",
                        r.outcome.as_str(),
                        r.delta,
                        r.fence_token
                    );
                }
                Ok(r) => format!("second rewrite {}", r.outcome.as_str()),
                Err(e) => format!("second rewrite failed: {e}"),
            };
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        said
    });
    Ok(Active::Holder(Box::new(holder), reading, successor))
}

/// Ends what `inject` started; answers what it did beyond ending the fault (what, outcome),
/// for the timeline.
pub async fn restore(
    active: Active,
    rig: &Arc<Mutex<Rig>>,
    conns: &Connections,
    out: &mut Outcomes,
) -> Result<Vec<(&'static str, String)>, RunnerError> {
    let mut repairs = Vec::new();
    match active {
        Active::Links(held) => {
            for h in held {
                h.restore().await?;
            }
        }
        Active::Stopped(which) => {
            let rig = rig.lock().await;
            for (c, i) in which {
                let proc = if c { &rig.consumers[i] } else { &rig.engines[i] };
                proc.signal(false);
            }
        }
        Active::Killed(which) => {
            let mut engines = Vec::new();
            {
                let mut rig = rig.lock().await;
                for &(c, i) in &which {
                    rig.respawn(c, i)?;
                    if !c {
                        engines.push(i);
                    }
                }
            }
            for i in engines {
                rig.lock().await.wait_healthy(i, Duration::from_secs(30)).await?;
            }
        }
        Active::Holder(holder, reading, successor) => {
            let second = successor.await.unwrap_or_else(|e| format!("second rewrite panicked: {e}"));
            repairs.push(("fenced rewrite", second));
            let result = rewrite::finish(conns, *holder, reading).await?;
            if matches!(result.outcome, Outcome::Applied | Outcome::Rebuilt) {
                out.stale_writes += 1;
            }
            repairs.push(("fenced rewrite", format!("paused holder resumed: {}", result.outcome.as_str())));
        }
        Active::Failover => {
            let promoted = rig.lock().await.fail_over().await?;
            let moved = format!("master killed, lagging replica promoted at {promoted}; every Redis link moved");
            repairs.push(("failover", moved));
        }
        Active::MadeDue(_) => {}
    }
    Ok(repairs)
}
