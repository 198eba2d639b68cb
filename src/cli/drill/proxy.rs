//! `stockguard drill proxy serve`: the fault proxy as a service of its own.

use std::time::Duration;

use super::super::CliError;
use stockguard_engine::drill::service::{self, Proxies};

pub(super) async fn serve(listen: String, lease: Duration) -> Result<(), CliError> {
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
