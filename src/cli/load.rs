//! `stockguard load`: drive an engine, then check every answer against the DB.

use std::sync::atomic::Ordering;
use std::time::Duration;

use clap::Args;

use super::{connect, output, CliError};
use stockguard_engine::load::{self, LoadConfig};

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// The engine's base URL.
    #[arg(long)]
    target: String,
    /// Products to buy (repeatable).
    #[arg(long = "product", required = true)]
    products: Vec<u64>,
    /// Distinct buyers; each asks once for each product.
    #[arg(long, default_value_t = 5000)]
    buyers: u64,
    /// Requests per second.
    #[arg(long, default_value_t = 2000)]
    rate: u32,
    /// Longest time to send for (e.g. 30s, 2m).
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    duration: Duration,
    /// Requests outstanding at once at most.
    #[arg(long, default_value_t = 256)]
    concurrency: usize,
    /// How long to wait for the engine to persist every accepted order.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    drain_timeout: Duration,
    #[arg(long)]
    json: bool,
}

pub async fn run(args: LoadArgs, profile: Option<&str>) -> Result<(), CliError> {
    let conns = connect(profile).await?;
    let cfg = LoadConfig {
        target: args.target,
        products: args.products,
        buyers: args.buyers,
        rate: args.rate,
        duration: args.duration,
        concurrency: args.concurrency,
        drain_timeout: args.drain_timeout,
    };
    let report = load::run(&conns.mysql, &cfg, &|c, elapsed| {
        let accepted = c.accepted.load(Ordering::Relaxed);
        eprint!(
            "\r{:>6.1}s sent {} answered {} accepted {} ({:.0}/s)   ",
            elapsed.as_secs_f64(),
            c.sent.load(Ordering::Relaxed),
            c.answered.load(Ordering::Relaxed),
            accepted,
            accepted as f64 / elapsed.as_secs_f64().max(0.001)
        );
    })
    .await?;
    eprintln!();
    if args.json {
        output::json(&report);
    } else {
        output::write_text(&report.to_text());
    }
    if report.holds() {
        Ok(())
    } else {
        Err(CliError::Refused("the sale did not hold: see the checks above".into()))
    }
}
