//! The fault timeline as a task of its own: each step injected at its time and restored at
//! its end, on the load's clock, whatever the sampler is doing. Told to stop (abort, halt,
//! the load over), it restores every fault still in force at once.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::NaiveDateTime;
use stockguard_core::connect::Connections;
use stockguard_core::drills::events::Event;
use stockguard_core::drills::plan::{Action, FaultStep, Target};
use tokio::sync::{mpsc, watch, Mutex};

use super::faults::{self, Active, Outcomes};
use super::rig::Rig;

/// What the timeline tells the runner, to be written to the run's timeline.
pub enum Said {
    Event(Event),
    /// Every engine reached the DB path this long after a Redis fault began.
    ToDbPath(Duration),
    /// What a fault did that shows at once it took effect (for the verdict, not the timeline).
    Bit {
        fault: String,
        what: String,
    },
}

pub struct Timeline {
    pub said: mpsc::UnboundedReceiver<(Instant, Said)>,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<Outcomes>,
}

impl Timeline {
    pub fn start(
        steps: Vec<FaultStep>,
        rig: Arc<Mutex<Rig>>,
        conns: Connections,
        started: Instant,
        renew_every: Duration,
    ) -> Self {
        let (tx, said) = mpsc::unbounded_channel();
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(run(steps, rig, conns, started, renew_every, tx, stopped));
        Self { said, stop, task }
    }

    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }

    /// Tells the task to restore every fault in force now (it does so at once, beside
    /// whatever the caller does next; [`Timeline::join`] waits for it).
    pub fn stop(&self) {
        let _ = self.stop.send(true);
    }

    /// Waits for the task, the restores included; answers what the faults came to and any
    /// events not yet taken.
    pub async fn join(self) -> (Outcomes, mpsc::UnboundedReceiver<(Instant, Said)>) {
        let _ = self.stop.send(true);
        (self.task.await.unwrap_or_default(), self.said)
    }
}

enum Due {
    Inject(usize),
    Restore(usize),
}

async fn run(
    steps: Vec<FaultStep>,
    rig: Arc<Mutex<Rig>>,
    conns: Connections,
    started: Instant,
    renew_every: Duration,
    tx: mpsc::UnboundedSender<(Instant, Said)>,
    mut stopped: watch::Receiver<bool>,
) -> Outcomes {
    let say = |said: Said| {
        let _ = tx.send((Instant::now(), said));
    };
    let mut plan: Vec<(Duration, Due)> = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        plan.push((step.start(), Due::Inject(i)));
        plan.push((step.end(), Due::Restore(i)));
    }
    // Restores before injections at the same instant; stable otherwise.
    plan.sort_by_key(|(at, due)| (*at, matches!(due, Due::Inject(_))));
    let mut active: Vec<Option<Active>> = steps.iter().map(|_| None).collect();
    let mut outcomes = Outcomes::default();
    for (at, due) in plan {
        let when = started + at;
        if !*stopped.borrow() {
            tokio::select! {
                _ = tokio::time::sleep_until(when.into()) => {}
                _ = stopped.changed() => {}
            }
        }
        if *stopped.borrow() {
            break;
        }
        match due {
            Due::Inject(i) => {
                let step = &steps[i];
                // Taken before the fault can act: the first refused connection is after it.
                let fault_at = chrono::Utc::now().naive_utc();
                let began = Instant::now();
                match faults::inject(step, &rig, &conns, renew_every).await {
                    Ok(a) => {
                        // Stamped when it began: what it does may show before the call returns.
                        let injected = Event::FaultInjected {
                            fault: step.name.clone(),
                            target: as_written(&step.target),
                            action: as_written(&step.action),
                        };
                        let _ = tx.send((began, Said::Event(injected)));
                        if let Some(what) = a.took_effect_at_once() {
                            let _ = tx.send((began, Said::Bit { fault: step.name.clone(), what }));
                        }
                        if step.target == Target::Redis && step.action != Action::Bandwidth {
                            let instances = rig.lock().await.instance_ids();
                            let (conns, tx) = (conns.clone(), tx.clone());
                            tokio::spawn(async move {
                                if let Some(took) = time_to_db_path(&conns, &instances, fault_at).await {
                                    let _ = tx.send((Instant::now(), Said::ToDbPath(took)));
                                }
                            });
                        }
                        active[i] = Some(a);
                    }
                    Err(e) => {
                        say(Said::Event(Event::Note { text: format!("fault {:?} not injected: {e}", step.name) }))
                    }
                }
            }
            Due::Restore(i) => {
                if let Some(a) = active[i].take() {
                    restore(&steps[i], a, &rig, &conns, &mut outcomes, &say).await;
                }
            }
        }
    }
    for (i, a) in active.into_iter().enumerate() {
        if let Some(a) = a {
            restore(&steps[i], a, &rig, &conns, &mut outcomes, &say).await;
        }
    }
    outcomes
}

async fn restore(
    step: &FaultStep,
    active: Active,
    rig: &Arc<Mutex<Rig>>,
    conns: &Connections,
    outcomes: &mut Outcomes,
    say: &impl Fn(Said),
) {
    let fails_over = matches!(active, Active::Failover);
    match faults::restore(active, rig, conns, outcomes).await {
        Ok(repairs) => {
            // The failover happens on restore: the master killed, a lagging replica promoted.
            if fails_over {
                say(Said::Bit { fault: step.name.clone(), what: "master killed, lagging replica promoted".into() });
            }
            for (what, outcome) in repairs {
                say(Said::Event(Event::Repair { what: what.into(), outcome }));
            }
            say(Said::Event(Event::FaultRestored { fault: step.name.clone() }));
        }
        Err(e) => say(Said::Event(Event::Note { text: format!("fault {:?} not restored cleanly: {e}", step.name) })),
    }
}

/// Polls the heartbeats until every rig engine is on the DB path, and answers how long after
/// `fault_at` the last one got there: its breaker's trip time when it tripped (the engine
/// stamps it), else when the poll first saw it in DB mode (the switch took it there). The
/// rig's engines run on this machine, so their clock is the runner's. `None` after 30 s.
async fn time_to_db_path(conns: &Connections, instances: &[String], fault_at: NaiveDateTime) -> Option<Duration> {
    let mut on_db: HashMap<String, NaiveDateTime> = HashMap::new();
    let give_up = Instant::now() + Duration::from_secs(30);
    while Instant::now() < give_up {
        let rows: Vec<(String, String, Option<NaiveDateTime>)> = sqlx::query_as(
            "SELECT instance_id, CAST(effective_mode AS CHAR), breaker_tripped_at FROM engine_heartbeats",
        )
        .fetch_all(&conns.mysql)
        .await
        .ok()?;
        let seen = chrono::Utc::now().naive_utc();
        for (id, mode, tripped) in rows {
            if !instances.contains(&id) || on_db.contains_key(&id) {
                continue;
            }
            match tripped.filter(|t| *t >= fault_at) {
                Some(t) => {
                    on_db.insert(id, t);
                }
                None if mode == "DEGRADED" => {
                    on_db.insert(id, seen);
                }
                None => {}
            }
        }
        if on_db.len() == instances.len() {
            let last = on_db.values().max()?;
            return (*last - fault_at).to_std().ok();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

/// A target or action as drill files write it (`redis_master`, `expire_unpaid`).
fn as_written(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}
