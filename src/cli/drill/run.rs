//! `stockguard drill list|run|rerun`: the drills there are, and running one to its verdict.

use std::time::Duration;

use super::super::output::{self, say};
use super::super::{connect, CliError};
use stockguard_core::drills::plan::{self, Plan};
use stockguard_core::drills::RunStatus;
use stockguard_engine::drill::runner::{self, Progress, RunOptions, Variant};

/// How a run is started, beyond its drill.
#[derive(Debug, clap::Args)]
pub struct RunFlags {
    /// CI's short form: buyers, stock and the timeline scaled by this factor (0 < F <= 1).
    #[arg(long)]
    short: Option<f64>,
    /// Latency added to every MySQL reply for the whole load (a what-if run to compare).
    #[arg(long, default_value_t = 0)]
    extra_db_latency_ms: u64,
    /// Drive this fault proxy API (`host:port`: a `stockguard drill proxy serve`, or a
    /// Toxiproxy) instead of the runner's own.
    #[arg(long)]
    proxy_api: Option<String>,
    /// How long a fault outlives a runner that stopped renewing it (the runner's own proxies).
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    lease: Duration,
    /// Run on a staging profile (production profiles are always refused).
    #[arg(long)]
    confirm: bool,
    /// Print the run's summary as JSON at the end.
    #[arg(long)]
    json: bool,
}

pub fn list(json: bool) -> Result<(), CliError> {
    let drills = plan::builtin();
    if json {
        output::json(&drills);
        return Ok(());
    }
    for d in drills {
        say!("{:<20} {} / {}", d.name, d.title_en, d.title_zh);
        say!("{:<20} {}", "", d.description);
    }
    Ok(())
}

pub async fn run(profile: Option<&str>, drill: &str, flags: RunFlags) -> Result<(), CliError> {
    let (plan, text) = Plan::load(drill).map_err(|e| CliError::Refused(e.to_string()))?;
    start(profile, plan, text, flags, None).await
}

/// Runs a finished run's drill again from the file text it recorded (so an edited file on
/// disk does not change what is compared), with the same seed.
pub async fn rerun(profile: Option<&str>, run_id: u64, flags: RunFlags) -> Result<(), CliError> {
    let conns = connect(profile).await?;
    let detail = stockguard_core::drills::show(&conns.mysql, run_id, Duration::from_secs(5)).await?;
    let text = detail.parameters["plan_text"]
        .as_str()
        .ok_or_else(|| CliError::Refused(format!("run {run_id} recorded no drill file to run again")))?
        .to_string();
    let plan = Plan::parse(&text).map_err(|e| CliError::Refused(e.to_string()))?;
    let mut flags = flags;
    // The short form of the run re-run, unless a new one is given.
    if flags.short.is_none() {
        flags.short = detail.parameters["variant"]["short"].as_f64();
    }
    start(profile, plan, text, flags, Some(run_id)).await
}

async fn start(
    profile: Option<&str>,
    plan: Plan,
    plan_text: String,
    flags: RunFlags,
    rerun_of: Option<u64>,
) -> Result<(), CliError> {
    if flags.short.is_some_and(|f| !(f > 0.0 && f <= 1.0)) {
        return Err(CliError::Refused("--short takes a factor above 0 and at most 1".into()));
    }
    let conns = connect(profile).await?;
    let binary = std::env::current_exe().map_err(|e| CliError::Refused(format!("cannot find this binary: {e}")))?;
    let opts = RunOptions {
        plan,
        plan_text,
        variant: Variant { short: flags.short, extra_db_latency_ms: flags.extra_db_latency_ms, rerun_of },
        binary,
        proxy_api: flags.proxy_api,
        lease: flags.lease,
        confirm: flags.confirm,
    };
    let shown = |p: &Progress| {
        match p {
        Progress::Started { run_id } => eprintln!("drill run #{run_id} started (`stockguard drill halt` stops it)"),
        Progress::Phase(phase) => eprintln!("-- {phase}"),
        Progress::Tick { elapsed_s, sent, total, figures } => eprintln!(
            "{elapsed_s:>4}s sent {sent}/{total}  drift {:+}  backlog {}  in flight {}  engines redis/db {}/{}  oversold {}",
            figures.drift, figures.backlog, figures.inflight, figures.redis_path, figures.db_path, figures.oversold_units
        ),
        Progress::Event(event) => match event {
            stockguard_core::drills::events::Event::Load(_) | stockguard_core::drills::events::Event::Tick(_) => {}
            other => eprintln!("      {}", serde_json::to_string(other).unwrap_or_default()),
        },
    }
    };
    let outcome = runner::run(&conns, opts, &shown).await.map_err(|e| CliError::Refused(e.to_string()))?;
    if flags.json {
        output::json(&serde_json::json!({
            "run_id": outcome.run_id,
            "status": outcome.status,
            "summary": outcome.summary,
        }));
    } else {
        say!("drill run #{}: {}", outcome.run_id, outcome.status.as_str());
        if let Some(reason) = &outcome.summary.reason {
            say!("  {reason}");
        }
        for check in &outcome.summary.checks {
            let mark = if check.passed { "ok  " } else { "FAIL" };
            say!("  {mark} {:<30} {:<30} bound {}", check.name, check.figure, check.bound);
        }
    }
    match outcome.status {
        RunStatus::Passed => Ok(()),
        status => Err(CliError::Refused(format!("drill run #{} ended {}", outcome.run_id, status.as_str()))),
    }
}
