//! Argument parsing and dispatch. Each subcommand module parses, calls the core and prints.

mod adapter;
mod alerts;
mod bench;
mod choice;
mod compensation;
mod degrade;
mod drill;
mod engine;
mod error;
mod load;
mod output;
mod overview;
mod profile;
mod recon;
mod rewrite;
mod roles;
mod sandbox;
mod several;
mod watch;

use clap::{Parser, Subcommand};
use output::say;

pub use error::CliError;
use stockguard_core::connect::Connections;
use stockguard_core::profile::{resolve_for_process, ConnectionSettings};

#[derive(Debug, Parser)]
#[command(name = "stockguard", version, about = "Flash-sale anti-oversell console and reference engine")]
pub struct Cli {
    /// Connection profile to use (see `stockguard profile list`). STOCKGUARD_MYSQL_URL,
    /// STOCKGUARD_REDIS_URL and STOCKGUARD_KEY_PREFIX override its fields; with a URL
    /// overridden it counts as production unless STOCKGUARD_ENVIRONMENT says otherwise.
    #[arg(long, global = true, env = "STOCKGUARD_PROFILE")]
    profile: Option<String>,
    /// The adapter file of a sale Stockguard did not build (docs/adapters/): the reading,
    /// `recon`, `alerts`, `rewrite` and `adapter ...` then read that sale's own tables, keys
    /// and queue. Else the profile's `adapter`.
    #[arg(long, global = true, env = "STOCKGUARD_ADAPTER")]
    adapter: Option<std::path::PathBuf>,
    /// Stockguard's own database for an adapter sale (baselines, audit, acknowledgements):
    /// never the sale's. Else the profile's `state_url`.
    #[arg(long, global = true, env = "STOCKGUARD_STATE_URL", hide_env_values = true)]
    state_url: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Apply the embedded schema migrations to the profile's MySQL.
    Migrate,
    /// Manage connection profiles.
    #[command(subcommand)]
    Profile(profile::ProfileCommand),
    /// A local sale to try things on: private MariaDB/Redis when none is reachable.
    #[command(subcommand)]
    Sandbox(sandbox::SandboxCommand),
    /// List the sale's products.
    Products {
        #[arg(long)]
        json: bool,
    },
    /// One reading of where every unit of stock is, per product.
    Recon(recon::ReconArgs),
    /// A sale Stockguard did not build, through its adapter file: check it, record baselines,
    /// repair a settled drift.
    #[command(subcommand)]
    Adapter(adapter::AdapterCommand),
    /// Rewrite Redis stock to what the DB says it should be, under a lock and a fence.
    Rewrite(rewrite::RewriteArgs),
    /// The degrade switch: status, DB mode on, guided exit off.
    #[command(subcommand)]
    Degrade(degrade::DegradeCommand),
    /// Oversell compensation: cases from the ledger, a plan, four-eyes approval, execution.
    #[command(subcommand)]
    Compensation(compensation::CompensationCommand),
    /// What fires now (confirmed drift, oversell, ledger, missing key, backlog) with its
    /// acknowledgements; `alerts ack KEY --reason ...` takes one.
    Alerts(alerts::AlertsArgs),
    /// The sale at a glance: units sold, orders/s, answers by kind, p99 and backlog from the
    /// engines' /metrics, the mode, open alerts and compensation cases, the stock burn-down.
    Overview(overview::OverviewArgs),
    /// Drift over time.
    #[command(subcommand)]
    Drift(recon::DriftCommand),
    /// The sale engine.
    #[command(subcommand)]
    Engine(engine::EngineCommand),
    /// Drive an engine with buyers, then check every answer against the DB.
    Load(load::LoadArgs),
    /// Serve the readings as Prometheus metrics (drift, status, in flight, pending release,
    /// reading latency), a reading every second.
    Watch(watch::WatchArgs),
    /// Benchmarks, measured side by side in one run.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Fault drills: their runs, halting them, the fault proxy as a service.
    #[command(subcommand)]
    Drill(drill::DrillCommand),
    /// Roles the servers enforce: MySQL roles and grants, Redis ACL users, from a roles file
    /// (`[[person]] name, role, mysql_user, mysql_host, redis_user, password_env`).
    #[command(subcommand)]
    Roles(roles::RolesCommand),
}

/// Resolves `--profile` and the environment into connection settings.
pub(crate) async fn settings(profile: Option<&str>) -> Result<ConnectionSettings, CliError> {
    let settings = resolve_for_process(profile).await?;
    for notice in &settings.notices {
        eprintln!("note: {notice}");
    }
    Ok(settings)
}

pub(crate) async fn connect(profile: Option<&str>) -> Result<Connections, CliError> {
    Ok(Connections::open(settings(profile).await?).await?)
}

pub async fn run(cli: Cli) -> Result<(), CliError> {
    let profile = cli.profile.as_deref();
    let adapter = adapter::AdapterOpts::resolve(cli.adapter, cli.state_url, profile);
    if adapter.file.is_some() {
        if let Some(command) = reads_only_our_own_sale(&cli.command) {
            return Err(CliError::Refused(format!(
                "`stockguard {command}` reads only a sale Stockguard built, not one through an adapter file; over an \
                 adapter, `recon`, `alerts`, `rewrite`, `watch`, `compensation`, `degrade` and `adapter \
                 check|baseline|repair|init|lost` do (drop --adapter, STOCKGUARD_ADAPTER and the profile's `adapter` \
                 for our own sale)"
            )));
        }
    }
    match cli.command {
        Command::Migrate => {
            let conns = connect(profile).await?;
            conns.migrate().await?;
            say!("migrations applied to {}", conns.settings.mysql_display());
            Ok(())
        }
        Command::Profile(cmd) => profile::run(cmd).await,
        Command::Sandbox(cmd) => sandbox::run(cmd, profile).await,
        Command::Products { json } => {
            let conns = connect(profile).await?;
            let products = stockguard_core::catalog::list_products(&conns.mysql).await?;
            output::products(&products, json);
            Ok(())
        }
        Command::Recon(args) => recon::recon(args, profile, &adapter).await,
        Command::Adapter(cmd) => adapter::run(cmd, &adapter, profile).await,
        Command::Drift(cmd) => recon::drift(cmd, profile, &adapter).await,
        Command::Alerts(args) => alerts::run(args, profile, &adapter).await,
        Command::Overview(args) => overview::run(args, profile).await,
        Command::Rewrite(args) => rewrite::run(args, profile, &adapter).await,
        Command::Degrade(cmd) => degrade::run(cmd, profile, &adapter).await,
        Command::Compensation(cmd) => compensation::run(cmd, profile, &adapter).await,
        Command::Engine(cmd) => engine::run(cmd, profile).await,
        Command::Drill(cmd) => drill::run(cmd, profile).await,
        Command::Roles(cmd) => roles::run(cmd, profile).await,
        Command::Load(args) => load::run(args, profile).await,
        Command::Watch(args) => watch::run(args, profile, &adapter).await,
        Command::Bench(cmd) => bench::run(cmd, profile).await,
    }
}

/// The commands that would read (or write) our own tables and keys whatever adapter file is
/// given: refused with one, rather than reading another sale than the one the file describes.
fn reads_only_our_own_sale(command: &Command) -> Option<&'static str> {
    Some(match command {
        Command::Recon(_) | Command::Adapter(_) | Command::Alerts(_) | Command::Drift(_) | Command::Rewrite(_) => {
            return None
        }
        // Over an adapter: cases in the state database, readings of the sale (issue 29).
        Command::Compensation(_) | Command::Watch(_) => return None,
        // Over an adapter it switches the sale's own flag, where `[switch]` says it is.
        Command::Degrade(_) => return None,
        // They read no sale (profiles, the local sandbox, a bench's own scratch sales).
        Command::Profile(_) | Command::Sandbox(_) | Command::Bench(_) => return None,
        Command::Migrate => "migrate",
        Command::Products { .. } => "products",
        Command::Overview(_) => "overview",
        Command::Engine(_) => "engine",
        Command::Drill(_) => "drill",
        Command::Roles(_) => "roles",
        Command::Load(_) => "load",
    })
}
