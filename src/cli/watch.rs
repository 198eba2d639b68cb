//! `stockguard watch --metrics-listen ADDR`: readings as Prometheus metrics, for the team's
//! own monitoring (`stockguard_engine::watch`).

use std::time::Duration;

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

pub async fn run(args: WatchArgs, profile: Option<&str>) -> Result<(), CliError> {
    if args.interval_ms == 0 {
        return Err(CliError::Refused("--interval-ms must be at least 1".into()));
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
    let opts = stockguard_engine::watch::WatchOptions {
        interval: Duration::from_millis(args.interval_ms),
        thresholds: stockguard_core::alerts::Thresholds {
            backlog_messages: args.backlog_threshold.unwrap_or(conns.settings.thresholds.backlog_messages),
            ..conns.settings.thresholds
        },
        settle_acknowledgements: args.settle_acknowledgements,
    };
    stockguard_engine::watch::run(conns, listener, opts, super::engine::shutdown_signal()).await?;
    Ok(())
}
