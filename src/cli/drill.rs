//! `stockguard drill list|run|rerun|status|halt|proxy serve` (running: [`super::drill_run`]).

use std::time::Duration;

use clap::Subcommand;

use super::output::{self, say};
use super::{connect, CliError};
use stockguard_core::drills;
use stockguard_engine::drill::service::{self, Proxies};

/// A running drill whose heartbeat (every second) is older than this is shown as dead.
const STALE_AFTER: Duration = Duration::from_secs(5);

#[derive(Debug, Subcommand)]
pub enum DrillCommand {
    /// The built-in drills.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Run a drill (a built-in one by name, or a drill file) against the profile's sale: the
    /// runner starts its own engines behind fault proxies, sends the load, injects the
    /// faults, checks the invariants every second and aborts on oversell.
    Run {
        /// A built-in drill's name (`stockguard drill list`) or a drill file's path.
        drill: String,
        #[command(flatten)]
        flags: super::drill_run::RunFlags,
    },
    /// Run a finished run's drill again: the same file text and seed, so the same schedule.
    Rerun {
        run: u64,
        #[command(flatten)]
        flags: super::drill_run::RunFlags,
    },
    /// The sale's drill runs, newest first; a running one whose runner stopped is shown dead.
    Status {
        #[arg(long, default_value_t = 20)]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
    /// Ask every running drill of the sale to stop and restore its faults (audited).
    Halt {
        #[arg(long)]
        reason: String,
    },
    /// The fault proxy.
    #[command(subcommand)]
    Proxy(ProxyCommand),
}

#[derive(Debug, Subcommand)]
pub enum ProxyCommand {
    /// Serve fault proxies, driven through Toxiproxy's HTTP API, until Ctrl-C.
    Serve {
        /// Where the control API listens (Toxiproxy's port by default).
        #[arg(long, default_value = "127.0.0.1:8474")]
        listen: String,
        /// How long a fault (a toxic, a disabled proxy) lasts after it was last set, unless
        /// set again: a runner that dies leaves no fault behind for longer. "0" keeps faults
        /// until they are removed, as Toxiproxy does.
        #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
        lease: Duration,
    },
}

pub async fn run(cmd: DrillCommand, profile: Option<&str>) -> Result<(), CliError> {
    match cmd {
        DrillCommand::List { json } => super::drill_run::list(json),
        DrillCommand::Run { drill, flags } => super::drill_run::run(profile, &drill, flags).await,
        DrillCommand::Rerun { run, flags } => super::drill_run::rerun(profile, run, flags).await,
        DrillCommand::Status { limit, json } => status(profile, limit, json).await,
        DrillCommand::Halt { reason } => halt(profile, &reason).await,
        DrillCommand::Proxy(ProxyCommand::Serve { listen, lease }) => serve(listen, lease).await,
    }
}

async fn status(profile: Option<&str>, limit: u32, json: bool) -> Result<(), CliError> {
    let conns = connect(profile).await?;
    let runs = drills::list(&conns.mysql, limit, STALE_AFTER).await?;
    if json {
        output::json(&runs);
        return Ok(());
    }
    if runs.is_empty() {
        say!("no drill has run on this sale");
    }
    for run in runs {
        let state = if run.dead { "DEAD (runner stopped without finishing)" } else { run.status.as_str() };
        let halt = run.halt_reason.map(|r| format!("; halt requested: {r}")).unwrap_or_default();
        say!("#{} {} {} started {} by {}{}", run.id, run.scenario, state, run.started_at, run.started_by, halt);
    }
    Ok(())
}

async fn halt(profile: Option<&str>, reason: &str) -> Result<(), CliError> {
    let conns = connect(profile).await?;
    let asked = drills::request_halt(&conns.mysql, &conns.settings, reason).await?;
    if asked.is_empty() {
        say!("no drill is running; nothing to halt (recorded in the audit log)");
    } else {
        say!("halt requested for runs {asked:?}: each stops and restores its faults on its next heartbeat");
    }
    Ok(())
}

async fn serve(listen: String, lease: Duration) -> Result<(), CliError> {
    let listener = tokio::net::TcpListener::bind(&listen)
        .await
        .map_err(|e| CliError::Refused(format!("cannot listen on {listen}: {e}")))?;
    let lease = (!lease.is_zero()).then_some(lease);
    eprintln!(
        "fault proxy API on http://{} (Toxiproxy's); faults {}",
        listener.local_addr().map(|a| a.to_string()).unwrap_or(listen),
        lease.map_or("last until removed".to_string(), |l| format!(
            "lapse {} after they were last set",
            humantime::format_duration(l)
        ))
    );
    service::serve(listener, Proxies::new(lease), async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await
    .map_err(|e| CliError::Refused(format!("server error: {e}")))
}
