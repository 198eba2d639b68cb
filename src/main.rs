//! The `stockguard` CLI: parses arguments, calls the core, prints, maps errors to one line.

mod cli;

use std::process::ExitCode;

use clap::Parser as _;

// The engine's order path allocates a little per request on every hop (HTTP, Redis reply,
// JSON): under load, glibc's malloc and free were about a fifth of the engine's `perf`
// samples, and with mimalloc its CPU per order fell from 33 to 28 us
// (`scripts/cpu-per-order.sh`, 32 outstanding requests).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            // The AMQP client logs a queue the server refused before our one line says so
            // (issue 49): its own words add nothing there, and `STOCKGUARD_LOG` brings them back.
            tracing_subscriber::EnvFilter::try_from_env("STOCKGUARD_LOG")
                .unwrap_or_else(|_| "warn,sqlx=error,lapin=off".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = cli::Cli::parse();
    match cli::run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {}", stockguard_core::step::chain(&err));
            ExitCode::from(err.exit_code())
        }
    }
}
