//! `stockguard watch --metrics-listen ADDR`: readings as Prometheus metrics, for the team's
//! own monitoring (`stockguard_engine::watch`). With an adapter file it watches the sale the
//! file describes, and opens an oversold product's compensation case in the state database.

use std::time::Duration;

use super::adapter::AdapterOpts;
use super::{connect, CliError};

#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// Where to serve `GET /metrics`, e.g. `0.0.0.0:9464`.
    #[arg(long)]
    metrics_listen: String,
    /// How often to take a reading of every product.
    #[arg(long, default_value_t = 1000)]
    interval_ms: u64,
    /// Reservations waiting to be persisted above which the backlog alerts (default: the
    /// profile's threshold).
    #[arg(long)]
    backlog_threshold: Option<i64>,
    /// Close acknowledgements whose alert cleared or whose time is up, as the console does
    /// (each audited). Needs an account that may write `alert_acks` (on-call).
    #[arg(long)]
    settle_acknowledgements: bool,
}

pub async fn run(args: WatchArgs, profile: Option<&str>, adapter: &AdapterOpts) -> Result<(), CliError> {
    if args.interval_ms == 0 {
        return Err(CliError::Refused("--interval-ms must be at least 1".into()));
    }
    if adapter.file.is_some() {
        return over_adapter(args, profile, adapter).await;
    }
    let conns = connect(profile).await?;
    let listener = stockguard_engine::watch::bind(&args.metrics_listen).await?;
    let addr = stockguard_engine::watch::served_on(&listener).map_or(args.metrics_listen.clone(), |a| a.to_string());
    eprintln!(
        "watching {} / {}: metrics at http://{addr}/metrics, a reading every {} ms",
        conns.settings.mysql_display(),
        conns.settings.redis_display(),
        args.interval_ms
    );
    let opts = options(&args, &conns.settings);
    stockguard_engine::watch::run(conns, listener, opts, super::engine::shutdown_signal()).await?;
    Ok(())
}

fn options(
    args: &WatchArgs,
    settings: &stockguard_core::profile::ConnectionSettings,
) -> stockguard_engine::watch::WatchOptions {
    stockguard_engine::watch::WatchOptions {
        interval: Duration::from_millis(args.interval_ms),
        thresholds: stockguard_core::alerts::Thresholds {
            backlog_messages: args.backlog_threshold.unwrap_or(settings.thresholds.backlog_messages),
            ..settings.thresholds
        },
        settle_acknowledgements: args.settle_acknowledgements,
    }
}

/// The watcher on the sale an adapter file describes.
async fn over_adapter(args: WatchArgs, profile: Option<&str>, adapter: &AdapterOpts) -> Result<(), CliError> {
    if args.settle_acknowledgements {
        return Err(CliError::Refused(
            "--settle-acknowledgements settles our own sale's acknowledgements; over an adapter the watcher only reads \
             and opens compensation cases"
                .into(),
        ));
    }
    let sale = super::adapter::open(adapter, profile).await?;
    let listener = stockguard_engine::watch::bind(&args.metrics_listen).await?;
    let addr = stockguard_engine::watch::served_on(&listener).map_or(args.metrics_listen.clone(), |a| a.to_string());
    if sale.state.is_none() {
        eprintln!("note: no state database (--state-url): an oversold product's compensation case cannot be opened");
    }
    eprintln!(
        "watching the sale {:?} over its adapter ({} / {}): metrics at http://{addr}/metrics, a reading every {} ms",
        sale.file.sale.name,
        sale.settings.mysql_display(),
        sale.settings.redis_display(),
        args.interval_ms
    );
    let opts = options(&args, &sale.settings);
    stockguard_engine::watch::run_adapter(sale.sale, listener, opts, super::engine::shutdown_signal()).await?;
    Ok(())
}
