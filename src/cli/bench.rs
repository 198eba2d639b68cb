//! `stockguard bench reserve|engine`.

use clap::Subcommand;

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
}

pub async fn run(cmd: BenchCommand, profile: Option<&str>) -> Result<(), CliError> {
    let conns = connect(profile).await?;
    let (report, json) = match cmd {
        BenchCommand::Reserve { quick, json } => (stockguard::bench::reserve::run(&conns, quick).await?, json),
        BenchCommand::Engine { quick, json } => {
            let exe = std::env::current_exe()
                .map_err(|e| CliError::Refused(format!("cannot find the stockguard binary: {e}")))?;
            (stockguard::bench::engine::run(&conns, &exe, quick).await?, json)
        }
        BenchCommand::Recon { quick, json } => {
            (stockguard::bench::recon::run(&conns, quick, &mut |step| eprintln!("bench recon: {step}")).await?, json)
        }
    };
    if json {
        output::json(&report);
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}
