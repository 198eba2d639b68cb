//! `stockguard sandbox up|seed|down`, and `demo-args` for `scripts/demo.sh`.

use std::path::PathBuf;

use clap::Subcommand;

use super::output::say;
use super::{connect, output, CliError};
use stockguard_core::profile::ProfileStore;
use stockguard_engine::sandbox::{self, UpOptions};

#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Use MySQL/Redis if reachable, else start private ones; migrate; write the `sandbox` profile.
    Up {
        /// Sandbox folder (data of private servers, state, env file).
        #[arg(long, env = "STOCKGUARD_SANDBOX_DIR", default_value = ".sandbox")]
        dir: PathBuf,
        /// Start a private Redis Cluster (three masters with a replica each) on loopback
        /// instead of using one Redis server; the profile's Redis URL lists its nodes.
        #[arg(long)]
        redis_cluster: bool,
        #[arg(long)]
        json: bool,
    },
    /// Load the demo sale (sandbox environments only).
    Seed {
        #[arg(long)]
        json: bool,
    },
    /// The demo's engine or buyers' arguments, on one line (`scripts/demo.sh` runs them).
    #[command(hide = true)]
    DemoArgs {
        #[arg(value_enum)]
        of: DemoPart,
    },
    /// Stop only the private servers `up` started.
    Down {
        #[arg(long, env = "STOCKGUARD_SANDBOX_DIR", default_value = ".sandbox")]
        dir: PathBuf,
    },
}

/// Whose arguments `sandbox demo-args` prints.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum DemoPart {
    /// `engine serve`'s, beyond `--listen`.
    Engine,
    /// One round of `load`'s, beyond `--target`.
    Load,
}

pub async fn run(cmd: SandboxCommand, profile: Option<&str>) -> Result<(), CliError> {
    match cmd {
        SandboxCommand::Up { dir, redis_cluster, json } => {
            let opts = UpOptions { redis_cluster, ..UpOptions::from_env(dir, Some(ProfileStore::default_path()?)) };
            let report = sandbox::up(&opts, &mut |line| eprintln!("{line}")).await?;
            if json {
                output::json(&report);
            } else {
                let origin = |private| if private { "private, started by the sandbox" } else { "already running" };
                say!("MySQL  {} ({})", report.mysql_url, origin(report.mysql_private));
                say!("Redis  {} ({})", report.redis_url, origin(report.redis_private));
                if let Some(file) = &report.profile_file {
                    say!("profile `sandbox` written to {file}");
                }
            }
            Ok(())
        }
        SandboxCommand::Seed { json } => {
            let conns = connect(Some(profile.unwrap_or("sandbox"))).await?;
            let report = sandbox::seed(&conns, &mut |line| eprintln!("{line}")).await?;
            if json {
                output::json(&report);
            } else {
                say!(
                    "seeded {} products, {} orders, {} in flight, {} pending releases (audit #{})",
                    report.products,
                    report.orders,
                    report.inflight,
                    report.pending_releases,
                    report.audit_id
                );
            }
            Ok(())
        }
        SandboxCommand::DemoArgs { of } => {
            let plan = sandbox::DEMO_TRAFFIC;
            let args = match of {
                DemoPart::Engine => plan.engine_args(),
                DemoPart::Load => plan.load_args(),
            };
            say!("{}", args.join(" "));
            Ok(())
        }
        SandboxCommand::Down { dir } => {
            let report = sandbox::down(&dir).await?;
            let said = |stopped| if stopped { "stopped" } else { "nothing of ours was running" };
            say!(
                "private MySQL: {}; private Redis: {}; private Redis Cluster: {}",
                said(report.mysql_stopped),
                said(report.redis_stopped),
                said(report.redis_cluster_stopped)
            );
            Ok(())
        }
    }
}
