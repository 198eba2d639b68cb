//! `stockguard recon` and `stockguard drift watch`.

use std::time::Duration;

use clap::{Args, Subcommand};

use super::{connect, output, CliError};
use stockguard::recon::read_products;

#[derive(Debug, Args)]
pub struct ReconArgs {
    /// Only these products (repeatable); all when omitted.
    #[arg(long = "product")]
    products: Vec<u64>,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
pub enum DriftCommand {
    /// A live terminal table of every product's drift, most severe first.
    Watch {
        /// Seconds between readings.
        #[arg(long, default_value_t = 1.0)]
        interval: f64,
        /// Stop after this many readings (default: until Ctrl-C).
        #[arg(long)]
        count: Option<u64>,
    },
}

pub async fn recon(args: ReconArgs, profile: Option<&str>) -> Result<(), CliError> {
    let conns = connect(profile).await?;
    let mut redis = conns.redis.clone();
    let readings = read_products(&conns.mysql, &mut redis, &conns.keys, &args.products).await?;
    if args.json {
        output::json(&readings);
    } else {
        print!("{}", output::readings_table(&readings));
    }
    Ok(())
}

pub async fn drift(cmd: DriftCommand, profile: Option<&str>) -> Result<(), CliError> {
    let DriftCommand::Watch { interval, count } = cmd;
    if !(interval.is_finite() && interval >= 0.1) {
        return Err(CliError::Refused(format!("--interval must be at least 0.1 s, got {interval}")));
    }
    let conns = connect(profile).await?;
    let mut redis = conns.redis.clone();
    let mut ticker = tokio::time::interval(Duration::from_secs_f64(interval));
    let mut n = 0u64;
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
        let readings = read_products(&conns.mysql, &mut redis, &conns.keys, &[]).await?;
        // Clear the screen and home the cursor, then redraw.
        print!("\x1b[2J\x1b[H");
        println!(
            "stockguard drift watch · {} · {} · {}  (Ctrl-C to stop)\n",
            conns.settings.environment,
            conns.settings.mysql_display(),
            chrono::Local::now().format("%H:%M:%S")
        );
        print!("{}", output::readings_table(&readings));
        n += 1;
        if count.is_some_and(|c| n >= c) {
            return Ok(());
        }
    }
}
