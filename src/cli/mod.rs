//! Argument parsing and dispatch. Each subcommand module parses, calls the core and prints.

mod adapter;
mod alerts;
mod audit;
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
mod timeline;
mod watch;

use clap::{Parser, Subcommand};
use output::say;

pub use error::CliError;
use stockguard_core::connect::Connections;
use stockguard_core::profile::{resolve_for_process, ConnectionSettings};
use stockguard_core::sale::{capability, Capability, OpenRequest, Sale, SaleKind};

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
    /// The audit log of every write action, newest first (over an adapter: its state database).
    Audit(audit::AuditArgs),
    /// What happened to the sale, oldest first: switch changes, guided exits, rewrites and
    /// repairs, acknowledgements, compensation steps, drills and every other audited action.
    Timeline(timeline::TimelineArgs),
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

/// Opens the sale the command names (the core's one way): over `adapter` when given (else
/// the profile's `adapter`), else our own; the settings' notices printed.
pub(crate) async fn open_sale(
    profile: Option<&str>,
    opts: &adapter::AdapterOpts,
    adapter: Option<&std::path::Path>,
) -> Result<Sale, CliError> {
    let request = OpenRequest { profile, adapter, state_url: opts.state_url.as_deref(), replica: false };
    let sale = stockguard_core::sale::open(&request).await?;
    for notice in &sale.settings().notices {
        eprintln!("note: {notice}");
    }
    Ok(sale)
}

pub(crate) async fn connect(profile: Option<&str>) -> Result<Connections, CliError> {
    Ok(Connections::open(settings(profile).await?).await?)
}

pub async fn run(cli: Cli) -> Result<(), CliError> {
    let profile = cli.profile.as_deref();
    let adapter = adapter::AdapterOpts::resolve(cli.adapter, cli.state_url, profile);
    if let Some(capability) = capability_of(&cli.command) {
        refused_over_adapter(&adapter, capability)?;
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
        Command::Audit(args) => audit::run(args, profile, &adapter).await,
        Command::Timeline(args) => timeline::run(args, profile, &adapter).await,
        Command::Overview(args) => overview::run(args, profile, &adapter).await,
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

/// Over an adapter file, whether its kind of sale can do `capability` at all (the core's
/// table), before anything is opened: the refusal names the sale as the file does, so it reads
/// as the window's. What the file itself must give is asked once the sale is open.
pub(crate) fn refused_over_adapter(opts: &adapter::AdapterOpts, capability: Capability) -> Result<(), CliError> {
    let Some(path) = &opts.file else { return Ok(()) };
    capability::of_kind_at_all(SaleKind::Adapter, capability).map_err(|mut refusal| {
        if let Ok(file) = stockguard_core::adapter::AdapterFile::load(path) {
            refusal.sale = file.sale.name;
        }
        CliError::NotForThisSale(refusal)
    })
}

/// What a command does to a sale, for the core's one table (none: it reads no sale, or says
/// itself what it does over an adapter). A command the table refuses over an adapter is
/// refused before anything is opened, in the words the window uses.
fn capability_of(command: &Command) -> Option<Capability> {
    Some(match command {
        Command::Recon(_) | Command::Drift(_) => Capability::Reading,
        Command::Adapter(_) => Capability::AdapterTools,
        Command::Alerts(_) => Capability::Alerts,
        // The timeline reads the records Stockguard keeps of the sale, as the audit log does.
        Command::Audit(_) | Command::Timeline(_) => Capability::Audit,
        Command::Rewrite(_) => Capability::Repair,
        Command::Compensation(_) => Capability::Compensation,
        Command::Watch(_) => Capability::Watch,
        Command::Degrade(_) => Capability::Degrade,
        Command::Overview(_) => Capability::Overview,
        Command::Migrate => Capability::Migrate,
        Command::Products { .. } => Capability::Products,
        Command::Engine(_) | Command::Load(_) => Capability::Engine,
        Command::Drill(_) => Capability::Drills,
        Command::Roles(_) => Capability::Rights,
        // They read no sale (profiles, the local sandbox, a bench's own scratch sales).
        Command::Profile(_) | Command::Sandbox(_) | Command::Bench(_) => return None,
    })
}
