//! `stockguard bench reserve|engine|recon|exit|deduct`.

use clap::Subcommand;

use stockguard_engine::bench::deduct::DeductPlan;
use stockguard_engine::bench::Report;

use super::{connect, output, CliError};

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// The reserve script: our Rust client against the redis-benchmark EVALSHA ceiling.
    Reserve {
        /// A small run that only checks the benchmark still works.
        #[arg(long)]
        quick: bool,
        #[arg(long)]
        json: bool,
    },
    /// One engine through HTTP against the ceiling; batched against single-order persist.
    Engine {
        #[arg(long)]
        quick: bool,
        #[arg(long)]
        json: bool,
    },
    /// The ledger query over 10,000 products and 1M/10M orders, with and without the covering
    /// index; the chunked check; one drift reading of 1,000 products.
    Recon {
        #[arg(long)]
        quick: bool,
        #[arg(long)]
        json: bool,
    },
    /// Redis Cluster beside the profile's one Redis server, in one run: the reserve script
    /// (one hot product, twelve products) and engines through HTTP (one on each, three on
    /// the cluster). Starts a private cluster for the run.
    Cluster {
        #[arg(long)]
        quick: bool,
        #[arg(long)]
        json: bool,
    },
    /// How long the guided exit from DB mode pauses sales at 20, 1,000 and 5,000 products:
    /// the per-product rebuild against the batched one, and the drift after each.
    Exit {
        /// 5 and 40 products.
        #[arg(long)]
        quick: bool,
        #[arg(long)]
        json: bool,
    },
    /// One hot product (stock 1,000, 5,000 buyers) at 8, 32 and 128 connections, 5 rounds:
    /// conditional update, SELECT ... FOR UPDATE, optimistic version, naive read-then-write.
    Deduct {
        /// Stock 100, 500 buyers, 4 and 8 connections, 2 rounds.
        #[arg(long)]
        quick: bool,
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(cmd: BenchCommand, profile: Option<&str>) -> Result<(), CliError> {
    let conns = connect(profile).await?;
    match cmd {
        BenchCommand::Reserve { quick, json } => {
            show(&stockguard_engine::bench::reserve::run(&conns, quick).await?, json)
        }
        BenchCommand::Engine { quick, json } => {
            let exe = std::env::current_exe()
                .map_err(|e| CliError::Refused(format!("cannot find the stockguard binary: {e}")))?;
            show(&stockguard_engine::bench::engine::run(&conns, &exe, quick).await?, json)
        }
        BenchCommand::Cluster { quick, json } => {
            let exe = std::env::current_exe()
                .map_err(|e| CliError::Refused(format!("cannot find the stockguard binary: {e}")))?;
            let mut progress = |step: &str| eprintln!("bench cluster: {step}");
            show(&stockguard_engine::bench::cluster::run(&conns, &exe, quick, &mut progress).await?, json)
        }
        BenchCommand::Recon { quick, json } => show(
            &stockguard_engine::bench::recon::run(&conns, quick, &mut |step| eprintln!("bench recon: {step}")).await?,
            json,
        ),
        BenchCommand::Exit { quick, json } => show(
            &stockguard_engine::bench::exit::run(&conns, quick, &mut |step| eprintln!("bench exit: {step}")).await?,
            json,
        ),
        BenchCommand::Deduct { quick, json } => {
            let plan = if quick { DeductPlan::quick() } else { DeductPlan::full() };
            show(
                &stockguard_engine::bench::deduct::run(&conns, &plan, &mut |step| eprintln!("bench deduct: {step}"))
                    .await?,
                json,
            )
        }
    }
    Ok(())
}

fn show(report: &impl Report, json: bool) {
    if json {
        output::json(report);
    } else {
        output::write_text(&report.to_text());
    }
}
