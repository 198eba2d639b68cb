//! `stockguard drill ...`: the drills and running one ([`run`]: list, run, rerun), the runs of
//! the sale ([`runs`]: status, halt), what each came to ([`review`]: report, compare, review
//! notes), and the fault proxy ([`proxy`]).

mod proxy;
mod review;
mod run;
mod runs;

use std::path::PathBuf;
use std::time::Duration;

use clap::Subcommand;

use super::choice::one_of;
use super::CliError;
use stockguard_core::drills::report::Format;
use stockguard_core::lang::Lang;

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
        flags: run::RunFlags,
    },
    /// Run a finished run's drill again: the same file text and seed, so the same schedule.
    Rerun {
        run: u64,
        #[command(flatten)]
        flags: run::RunFlags,
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
    /// A run written up: header, checks, figures, charts (HTML), review, orders to compensate.
    Report {
        run: u64,
        /// `html` (one self-contained page), `md` (Markdown, a table per phase instead of the
        /// charts) or `json` (the same content as data; see docs/json.md).
        #[arg(long, value_parser = one_of(&Format::ALL, Format::as_str), default_value = "html")]
        format: Format,
        #[arg(long, value_parser = one_of(&Lang::ALL, Lang::as_str), default_value = "en")]
        lang: Lang,
        /// Write the report to this file instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run B against run A (the baseline), figure by figure; regressions are flagged, and the
    /// command exits 3 when there is one (CI can gate on it).
    Compare {
        a: u64,
        b: u64,
        /// How much worse (relative: 0.2 is 20%) a figure of B may be before it is flagged.
        /// Oversell, lost and duplicated orders are flagged on any increase.
        #[arg(long, default_value = "0.2", value_parser = review::threshold)]
        threshold: f64,
        #[arg(long)]
        json: bool,
    },
    /// Write the facilitator's notes on a run (replacing any; audited); the report shows them
    /// as follow-ups.
    Review {
        run: u64,
        #[arg(long)]
        notes: String,
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
        /// Listen on an address other machines reach (say 0.0.0.0): the API has no
        /// authentication, so anyone who reaches it can cut this machine's links.
        #[arg(long)]
        allow_remote: bool,
    },
}

pub async fn run(cmd: DrillCommand, profile: Option<&str>) -> Result<(), CliError> {
    match cmd {
        DrillCommand::List { json } => run::list(json),
        DrillCommand::Run { drill, flags } => run::run(profile, &drill, flags).await,
        DrillCommand::Rerun { run: id, flags } => run::rerun(profile, id, flags).await,
        DrillCommand::Status { limit, json } => runs::status(profile, limit, json).await,
        DrillCommand::Halt { reason } => runs::halt(profile, &reason).await,
        DrillCommand::Report { run, format, lang, out } => {
            review::report(profile, run, format, lang, out.as_deref()).await
        }
        DrillCommand::Compare { a, b, threshold, json } => review::compare(profile, a, b, threshold, json).await,
        DrillCommand::Review { run, notes } => review::review(profile, run, &notes).await,
        DrillCommand::Proxy(ProxyCommand::Serve { listen, lease, allow_remote }) => {
            proxy::serve(listen, lease, allow_remote).await
        }
    }
}
