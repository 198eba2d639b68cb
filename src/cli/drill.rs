//! `stockguard drill proxy serve`.

use std::time::Duration;

use clap::Subcommand;

use super::CliError;
use stockguard_engine::drill::service::{self, Proxies};

#[derive(Debug, Subcommand)]
pub enum DrillCommand {
    /// The fault proxy.
    #[command(subcommand)]
    Proxy(ProxyCommand),
}

#[derive(Debug, Subcommand)]
pub enum ProxyCommand {
    /// Serve fault proxies, driven through Toxiproxy's HTTP API, until Ctrl-C.
    Serve {
        /// Where the control API listens (Toxiproxy's port by default).
        #[arg(long, default_value = "127.0.0.1:8474")]
        listen: String,
        /// How long a fault (a toxic, a disabled proxy) lasts after it was last set, unless
        /// set again: a runner that dies leaves no fault behind for longer. "0" keeps faults
        /// until they are removed, as Toxiproxy does.
        #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
        lease: Duration,
    },
}

pub async fn run(cmd: DrillCommand) -> Result<(), CliError> {
    let DrillCommand::Proxy(ProxyCommand::Serve { listen, lease }) = cmd;
    let listener = tokio::net::TcpListener::bind(&listen)
        .await
        .map_err(|e| CliError::Refused(format!("cannot listen on {listen}: {e}")))?;
    let lease = (!lease.is_zero()).then_some(lease);
    eprintln!(
        "fault proxy API on http://{} (Toxiproxy's); faults {}",
        listener.local_addr().map(|a| a.to_string()).unwrap_or(listen),
        lease.map_or("last until removed".to_string(), |l| format!(
            "lapse {} after they were last set",
            humantime::format_duration(l)
        ))
    );
    service::serve(listener, Proxies::new(lease), async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await
    .map_err(|e| CliError::Refused(format!("server error: {e}")))
}
