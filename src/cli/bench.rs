//! `stockguard bench reserve|engine|recon|cluster|exit|deduct|adapter`.

use clap::Subcommand;

use stockguard_engine::bench::adapter::AdapterPlan;
use stockguard_engine::bench::deduct::DeductPlan;
use stockguard_engine::bench::engine::EnginePlan;
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
    /// One engine through HTTP against the ceiling; batched against single-order persist;
    /// what vouching costs: vouching off, on with a healthy replica, on with the replica
    /// stalled (a private Redis with one replica, started for the run).
    Engine {
        #[arg(long)]
        quick: bool,
        #[arg(long)]
        json: bool,
        /// Buyers of each vouching run with vouching off and with the replica healthy
        /// (default 60,000; 600 with --quick).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        vouching_orders: Option<u64>,
        /// Buyers of each vouching run with the replica stalled (default 3,000; 100 with --quick).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        stalled_orders: Option<u64>,
        /// Rounds of the three vouching runs; the figures are the medians (default 3; 1 with --quick).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        vouching_rounds: Option<u32>,
        /// Requests outstanding at once in each vouching run (default 50, as in the rest of
        /// `bench engine`).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=10_000))]
        vouching_clients: Option<u64>,
        /// Only what vouching costs: no ceiling, no HTTP run on the profile's Redis, no persist figures.
        #[arg(long)]
        vouching_only: bool,
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
    /// An exact reading of every product of a course-shaped sale over its adapter file (a
    /// Redis stream in flight, entries pending) beside our own exact reading of a native sale
    /// of the same size, in alternating rounds; fails when either reading is wrong.
    Adapter {
        /// 50 products, 1 round.
        #[arg(long)]
        quick: bool,
        #[arg(long)]
        json: bool,
        /// Products in each sale (default 5,000; 50 with --quick).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        products: Option<u64>,
        /// Rounds of both readings; the figures are the medians (default 3; 1 with --quick).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        rounds: Option<u32>,
    },
}

pub async fn run(cmd: BenchCommand, profile: Option<&str>) -> Result<(), CliError> {
    let conns = connect(profile).await?;
    match cmd {
        BenchCommand::Reserve { quick, json } => {
            show(&stockguard_engine::bench::reserve::run(&conns, quick).await?, json)
        }
        BenchCommand::Engine {
            quick,
            json,
            vouching_orders,
            stalled_orders,
            vouching_rounds,
            vouching_clients,
            vouching_only,
        } => {
            let exe = std::env::current_exe()
                .map_err(|e| CliError::Refused(format!("cannot find the stockguard binary: {e}")))?;
            let mut plan = EnginePlan::new(quick);
            plan.vouching_only = vouching_only;
            let v = &mut plan.vouching;
            v.orders = vouching_orders.unwrap_or(v.orders);
            v.stalled_orders = stalled_orders.unwrap_or(v.stalled_orders);
            v.rounds = vouching_rounds.unwrap_or(v.rounds);
            v.clients = vouching_clients.map_or(v.clients, |n| n as usize);
            let mut progress = |step: &str| eprintln!("bench engine: {step}");
            show(&stockguard_engine::bench::engine::run(&conns, &exe, &plan, &mut progress).await?, json)
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
        BenchCommand::Adapter { quick, json, products, rounds } => {
            let mut plan = AdapterPlan::new(quick);
            plan.products = products.unwrap_or(plan.products);
            plan.rounds = rounds.unwrap_or(plan.rounds);
            show(
                &stockguard_engine::bench::adapter::run(&conns, &plan, &mut |step| eprintln!("bench adapter: {step}"))
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
