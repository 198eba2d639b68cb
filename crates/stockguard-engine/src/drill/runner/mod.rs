//! The drill runner: one drill file run against the profile's MySQL and Redis.
//!
//! - [`rig`]: fresh products, a fault proxy per engine link, the engine processes.
//! - [`schedule`]: the seeded request schedule; [`load`]: sending it, second by second.
//! - [`timeline`]: the fault steps at their times; [`faults`]: what each one does.
//! - [`watch`]: the invariants, read every tick from the ledger and Redis.
//! - [`lead`]: the sale led back to Redis (the guided exit) once the faults are over.
//! - [`failover`], [`repair`]: the failover drill's own master and replica, and the fenced
//!   rewrite of the drift it leaves, confirmed on two ticks.
//! - `process` (private): what every process the runner starts shares: it dies with the
//!   runner, and a server's port is one the load's outgoing connections cannot take first.
//! - [`verdict`]: the figures and checks a run ends with.
//!
//! The run lives in the database (`drill_runs`, `drill_events`): its heartbeat every tick,
//! which also brings a halt requested from anywhere; every event on the load's clock. An
//! oversold unit, a negative Redis stock or a declared abort condition aborts the drill
//! within the tick that sees it: load stopped, every fault restored, run `ABORTED`.

pub mod failover;
pub mod faults;
pub mod lead;
pub mod load;
mod process;
pub mod repair;
pub mod rig;
pub mod schedule;
pub mod timeline;
pub mod verdict;
pub mod watch;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use stockguard_core::connect::Connections;
use stockguard_core::drills::events::{self, Event, TickFigures};
use stockguard_core::drills::plan::{Action, FaultStep, Plan, Target};
use stockguard_core::drills::summary::Summary;
use stockguard_core::drills::{self, NewRun, RunStatus};
use stockguard_core::profile::EnvironmentKind;
use tokio::sync::Mutex;

use self::load::{LoadRun, Targets};
use self::rig::{Rig, RigOptions};
use self::schedule::Schedule;
use self::timeline::{Said, Timeline};

/// What the run changes from its file, recorded with it (a leaf of the core, which words it
/// in the report's language).
pub use stockguard_core::drills::variant::Variant;
use stockguard_core::drills::variant::{VARIANT_FAULT, VARIANT_FAULT_ZH};

/// How often the sampler reads the invariants and the runner beats its heart.
const TICK: Duration = Duration::from_secs(1);

#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error("{0}")]
    Refused(String),
    #[error("the drill rig: {0}")]
    Rig(String),
    #[error(transparent)]
    Plan(#[from] stockguard_core::drills::plan::PlanError),
    #[error(transparent)]
    Run(#[from] stockguard_core::drills::DrillRunError),
    #[error(transparent)]
    Proxy(#[from] crate::drill::client::ProxyApiError),
    #[error(transparent)]
    Rewrite(#[from] stockguard_core::rewrite::RewriteError),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
}

pub struct RunOptions {
    pub plan: Plan,
    pub plan_text: String,
    pub variant: Variant,
    /// The `stockguard` binary the engines are started from.
    pub binary: PathBuf,
    /// An external proxy API instead of the runner's own.
    pub proxy_api: Option<String>,
    /// The runner's own proxies' fault lease.
    pub lease: Duration,
    /// Staging needs this said out loud.
    pub confirm: bool,
}

/// What the runner tells whoever started it, about once a second.
#[derive(Debug, Clone)]
pub enum Progress {
    Started { run_id: u64 },
    Phase(&'static str),
    Tick { elapsed_s: u64, sent: usize, total: usize, figures: TickFigures },
    Event(Event),
}

pub struct RunOutcome {
    pub run_id: u64,
    pub status: RunStatus,
    pub summary: Summary,
}

/// Runs a drill from start to verdict. The rig is torn down whatever happens.
pub async fn run(
    conns: &Connections,
    opts: RunOptions,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<RunOutcome, RunnerError> {
    match conns.settings.environment {
        EnvironmentKind::Production => {
            return Err(RunnerError::Refused("drills are refused on production profiles".into()))
        }
        EnvironmentKind::Staging if !opts.confirm => {
            return Err(RunnerError::Refused("this profile is staging: pass --confirm to run a drill on it".into()))
        }
        _ => {}
    }
    conns.settings.may(stockguard_core::action::Action::RunDrill).map_err(|r| RunnerError::Refused(r.to_string()))?;
    let mut plan = match opts.variant.short {
        Some(f) => opts.plan.clone().shortened(f).map_err(|e| RunnerError::Refused(format!("--short {f}: {e}")))?,
        None => opts.plan.clone(),
    };
    // The drill's own faults: the variant's is not one of them (it does not excuse drift, and
    // recovery is timed from the end of the drill's faults, as in the run compared with).
    let drill_faults: Vec<String> = plan.faults.iter().map(|f| f.name.clone()).collect();
    let drill_fault_end = plan.faults.iter().map(FaultStep::end).max().unwrap_or_default();
    if opts.variant.extra_db_latency_ms > 0 {
        plan.faults.push(FaultStep {
            name: VARIANT_FAULT.into(),
            name_zh: Some(VARIANT_FAULT_ZH.into()),
            target: Target::Mysql,
            action: Action::Latency,
            at_s: 0.0,
            // The whole run, recovery included: restored when the run ends.
            for_s: 86_400.0,
            engines: Vec::new(),
            latency_ms: opts.variant.extra_db_latency_ms,
            rate_kb: 0,
        });
    }
    // A run whose runner was killed is ended first (its rig's row led back, its heartbeats and
    // keys gone), so it neither lingers nor is mistaken for one still going.
    drills::clear_leftovers(conns).await;
    let runner = format!("{}:{}", hostname(), std::process::id());
    let run_id = drills::begin(
        &conns.mysql,
        &NewRun {
            scenario: &plan.name,
            runner: &runner,
            plan_hash: &Plan::hash(&opts.plan_text),
            seed: plan.load.seed,
            parameters: serde_json::json!({
                "plan_text": opts.plan_text,
                "variant": opts.variant,
                "drill": plan,
            }),
        },
    )
    .await?;
    progress(&Progress::Started { run_id });
    let rig_opts = RigOptions { binary: opts.binary.clone(), proxy_api: opts.proxy_api.clone(), lease: opts.lease };
    progress(&Progress::Phase("rig"));
    let rig = match Rig::build(conns, &plan, run_id, rig_opts).await {
        Ok(rig) => Arc::new(Mutex::new(rig)),
        Err(e) => return Err(failed(conns, run_id, "the rig could not be built", e).await),
    };
    let renew_every = (opts.lease / 3).clamp(Duration::from_millis(200), Duration::from_secs(5));
    let faults = DrillFaults { names: drill_faults, end: drill_fault_end };
    // The sale as the runner sees it (the failover drill's Redis is the rig's own).
    let sale = rig.lock().await.runner_conns.clone();
    let result = drive(&sale, &plan, &faults, run_id, rig.clone(), renew_every, &opts.variant, progress).await;
    rig.lock().await.tear_down().await;
    if let Err(e) = rig.lock().await.take_off_sale(conns).await {
        tracing::warn!(run_id, error = %e, "the rig's Redis keys could not be removed");
    }
    let (status, summary) = match result {
        Ok(done) => done,
        Err(e) => return Err(failed(conns, run_id, "the runner failed", e).await),
    };
    // A halt that came while the run was finishing still finds it RUNNING: first verdict stands.
    let summary_json = serde_json::to_value(&summary).expect("a summary serializes");
    match drills::finish(&conns.mysql, run_id, status, &summary_json).await {
        Ok(()) | Err(drills::DrillRunError::AlreadyFinished(_)) => {}
        Err(e) => return Err(e.into()),
    }
    forget_heartbeats(conns, run_id).await;
    // A row a person put on one of the rig's products (or the rig's own, not led back) rules
    // nothing now: it lapses with the run, through the switch, audited.
    if let Err(e) = drills::lead_back_rows_of(conns, run_id).await {
        tracing::warn!(run_id, error = %e, "the rig's switch rows could not be led back");
    }
    Ok(RunOutcome { run_id, status, summary })
}

/// Ends the run FAILED with why (best effort: the error is what the caller hears) and hands
/// the error back.
async fn failed(conns: &Connections, run_id: u64, what: &str, e: RunnerError) -> RunnerError {
    let summary = Summary { reason: Some(format!("{what}: {e}")), ..Summary::default() };
    let summary = serde_json::to_value(&summary).unwrap_or_default();
    let _ = drills::finish(&conns.mysql, run_id, RunStatus::Failed, &summary).await;
    forget_heartbeats(conns, run_id).await;
    e
}

/// The run is over and its engines stopped: their heartbeats go (best effort; a look's
/// [`drills::clear_leftovers`] removes any left).
async fn forget_heartbeats(conns: &Connections, run_id: u64) {
    if let Err(e) = drills::forget_heartbeats(&conns.mysql, run_id).await {
        tracing::warn!(run_id, error = %e, "the rig's engine heartbeats could not be removed");
    }
}

fn hostname() -> String {
    std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()).unwrap_or_else(|| "localhost".into())
}

/// The drill file's own faults (not a variant's), and when the last one ends.
struct DrillFaults {
    names: Vec<String>,
    end: Duration,
}

/// Why the load stopped early.
enum Stopped {
    Abort(String),
    Halt(String),
}

/// The run between the rig and the verdict.
#[allow(clippy::too_many_arguments)] // one call site; a struct would only rename them
async fn drive(
    conns: &Connections,
    plan: &Plan,
    faults: &DrillFaults,
    run_id: u64,
    rig: Arc<Mutex<Rig>>,
    renew_every: Duration,
    variant: &Variant,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<(RunStatus, Summary), RunnerError> {
    let (engines, products, instances) = {
        let rig = rig.lock().await;
        (rig.engines.iter().filter_map(|e| e.url.clone()).collect::<Vec<_>>(), rig.products.clone(), rig.instance_ids())
    };
    let schedule = Schedule::build(&plan.load, products.len(), plan.rig.engines);
    let first_user = 2_000_000_000 + run_id * 10_000_000;
    let targets = Targets { engines, products: products.clone(), first_user, tag: format!("{run_id}") };
    let mut rec = verdict::Record::new(plan, variant.short, products.clone(), faults.names.clone());
    let load = LoadRun::start(&schedule, targets, plan.load.concurrency);
    let started = load.started;
    let at = |t: Instant| t.saturating_duration_since(started).as_millis() as i64;
    let note = |event: Event, when: Instant| {
        progress(&Progress::Event(event.clone()));
        async move { events::record(&conns.mysql, run_id, at(when), &event).await }
    };
    note(Event::Phase { phase: "load".into() }, started).await?;
    progress(&Progress::Phase("load"));
    let mut timeline = Timeline::start(plan.faults.clone(), rig.clone(), conns.clone(), started, renew_every);
    let mut tick = tokio::time::interval(TICK);
    let mut stopped: Option<Stopped> = None;
    let mut last_mode = (u32::MAX, u32::MAX);
    // The drill goes on until the load is sent, the faults are over and the sale is back on
    // Redis (see `lead`); then it drains.
    let mut leader = lead::Leader::new(run_id, plan.guided_exit);
    let fails_over = plan.faults.iter().any(|f| f.target == Target::RedisMaster);
    let mut repairer = repair::Repairer::default();
    loop {
        // A step that could not be injected never ends: a minute past its time it is over.
        let elapsed = started.elapsed();
        let faults_over =
            (elapsed >= faults.end && rec.windows_closed()) || elapsed > faults.end + Duration::from_secs(60);
        let repaired = !fails_over || repairer.settled();
        if stopped.is_some() || (load.finished() && faults_over && leader.done && repaired) {
            break;
        }
        tick.tick().await;
        while let Ok((when, said)) = timeline.said.try_recv() {
            match said {
                Said::Event(e) => {
                    rec.saw(&e, at(when));
                    note(e, when).await?;
                }
                Said::ToDbPath(took) => rec.to_db_path(took),
                Said::Bit { fault, what } => rec.bit(&fault, what),
            }
        }
        let now = Instant::now();
        for (second, figures) in load.take_seconds(started.elapsed().as_secs()) {
            if let Some(rate) = plan.abort.buyer_error_rate_above {
                let errors = figures.error_count() as f64;
                if figures.sent > 0 && errors / figures.sent as f64 > rate {
                    stopped.get_or_insert(Stopped::Abort(format!(
                        "second {second}: buyer error rate {:.1}% above the abort bound {:.1}%",
                        100.0 * errors / figures.sent as f64,
                        100.0 * rate
                    )));
                }
            }
            rec.second(second, &figures);
            let when = started + Duration::from_secs(second + 1);
            note(Event::Load(figures), when).await?;
        }
        let (figures, negative) = watch::tick(conns, &products, &instances).await?;
        let offset = at(now);
        if (figures.redis_path, figures.db_path) != last_mode {
            last_mode = (figures.redis_path, figures.db_path);
            let unknown = plan.rig.engines.saturating_sub(figures.redis_path + figures.db_path);
            note(Event::Mode { redis_path: figures.redis_path, db_path: figures.db_path, unknown }, now).await?;
        }
        for violation in rec.tick(&figures, negative, offset) {
            let (invariant, figure) = violation;
            note(Event::Violation { invariant: invariant.clone(), figure: figure.clone() }, now).await?;
            if invariant == "oversell" || invariant == "redis_stock_negative" {
                stopped.get_or_insert(Stopped::Abort(format!("{invariant}: {figure}")));
            }
        }
        if let Some(bound) = plan.abort.drift_outside_faults_above {
            if !rec.in_fault_window(offset) && figures.drift_max_abs.abs() > bound {
                stopped.get_or_insert(Stopped::Abort(format!(
                    "drift {} outside every fault window, above the abort bound {bound}",
                    figures.drift_max_abs
                )));
            }
        }
        if fails_over && faults_over {
            for outcome in repairer.step(&figures, conns, &products).await.unwrap_or_default() {
                note(Event::Repair { what: "fenced rewrite".into(), outcome }, Instant::now()).await?;
            }
        }
        let engines = plan.rig.engines;
        // After a failover the drift is confirmed and repaired first, as the on-call engineer
        // would: the guided exit's own rebuild would otherwise race the repair for the lock
        // and hide the drift before a second reading could confirm it.
        let may_lead = faults_over && (!fails_over || repairer.settled());
        if let Some(led_back) = leader.step(may_lead, &figures, engines, conns, &instances).await {
            rec.propagation(led_back.propagation_ms);
            note(Event::Repair { what: "guided exit to Redis".into(), outcome: led_back.outcome }, Instant::now())
                .await?;
        }
        note(Event::Tick(figures.clone()), now).await?;
        let (sent, total) = load.progress();
        progress(&Progress::Tick { elapsed_s: started.elapsed().as_secs(), sent, total, figures });
        if let Some(reason) = drills::heartbeat(&conns.mysql, run_id).await? {
            stopped.get_or_insert(Stopped::Halt(reason));
        }
    }
    // Said before anything is stopped, so the timeline shows when it was decided; then the
    // load stops and every fault is restored before anything else: an abort ends the damage
    // first.
    let stopping = Instant::now();
    match &stopped {
        Some(Stopped::Abort(reason)) => {
            note(Event::Abort { reason: reason.clone() }, stopping).await?;
            drills::mark_aborted(&conns.mysql, run_id, reason).await?;
        }
        Some(Stopped::Halt(reason)) => note(Event::Halt { reason: reason.clone() }, stopping).await?,
        None => {}
    }
    let early = stopped.is_some();
    timeline.stop();
    let finished = if early { load.stop().await } else { load.finish().await };
    for (second, figures) in &finished.rest {
        rec.second(*second, figures);
        note(Event::Load(figures.clone()), started + Duration::from_secs(second + 1)).await?;
    }
    let (outcomes, mut said) = timeline.join().await;
    while let Ok((when, said)) = said.try_recv() {
        match said {
            Said::Event(e) => {
                rec.saw(&e, at(when));
                note(e, when).await?;
            }
            Said::ToDbPath(took) => rec.to_db_path(took),
            Said::Bit { fault, what } => rec.bit(&fault, what),
        }
    }

    // Back to Redis, then drain: every accepted order persisted or failed back.
    progress(&Progress::Phase("drain"));
    note(Event::Phase { phase: "drain".into() }, Instant::now()).await?;
    {
        // Stopped early while the exit ran: it finishes (a half-done exit would leave sales
        // paused); what it did goes on the timeline.
        for outcome in repairer.finish().await.unwrap_or_default() {
            note(Event::Repair { what: "fenced rewrite".into(), outcome }, Instant::now()).await?;
        }
        if let Some(led_back) = leader.finish().await {
            rec.propagation(led_back.propagation_ms);
            let repair = Event::Repair { what: "guided exit to Redis".into(), outcome: led_back.outcome };
            note(repair, Instant::now()).await?;
        }
    }
    let drain_deadline = Instant::now() + Duration::from_secs(plan.drain_s);
    loop {
        let now = Instant::now();
        let (figures, negative) = watch::tick(conns, &products, &instances).await?;
        for (invariant, figure) in rec.tick(&figures, negative, at(now)) {
            note(Event::Violation { invariant, figure }, now).await?;
        }
        let settled = figures.backlog == 0 && figures.inflight == 0 && figures.drift == 0 && figures.db_path == 0;
        note(Event::Tick(figures), now).await?;
        let _ = drills::heartbeat(&conns.mysql, run_id).await;
        if (settled && !early) || now >= drain_deadline || (early && now >= stopping + Duration::from_secs(5)) {
            break;
        }
        tokio::time::sleep(TICK).await;
    }
    if let Some((invariant, figure)) = rec.settle() {
        note(Event::Violation { invariant, figure }, Instant::now()).await?;
    }
    progress(&Progress::Phase("verify"));
    note(Event::Phase { phase: "verify".into() }, Instant::now()).await?;
    let checked =
        verdict::check_orders(conns, &finished.answers, first_user, plan.load.buyers, Duration::from_secs(5)).await?;
    let mut affected = watch::affected_orders(conns, &products).await?;
    affected.extend(checked.lost_orders.iter().cloned());
    rec.drift_confirmed(repairer.confirmed_after);
    let mut summary = rec.summary(
        schedule.requests.len() as u64,
        &checked,
        &finished,
        &outcomes,
        affected,
        &schedule.hash,
        variant.describe_in(stockguard_core::lang::Lang::En),
    );
    let status = match stopped {
        Some(Stopped::Abort(reason)) => {
            summary.reason = Some(reason);
            RunStatus::Aborted
        }
        Some(Stopped::Halt(reason)) => {
            summary.reason = Some(format!("halted: {reason}"));
            RunStatus::Halted
        }
        // A run that broke nothing but proved nothing (no fault bit, the rig not back) is
        // INCONCLUSIVE, not PASSED.
        None => {
            let (status, reason) = verdict::status_of(&summary);
            summary.reason = reason;
            status
        }
    };
    note(Event::Phase { phase: "done".into() }, Instant::now()).await?;
    Ok((status, summary))
}
