//! `stockguard drill proxy serve`: the fault proxy as a service of its own.

use std::time::Duration;

use super::super::CliError;
use stockguard_engine::drill::service::{self, Proxies};

pub(super) async fn serve(listen: String, lease: Duration, allow_remote: bool) -> Result<(), CliError> {
    let listener = tokio::net::TcpListener::bind(&listen)
        .await
        .map_err(|e| CliError::Refused(format!("cannot listen on {listen}: {e}")))?;
    let local = listener.local_addr().map_err(|e| CliError::Refused(format!("cannot listen on {listen}: {e}")))?;
    // The API has no authentication: whoever reaches it can cut this machine's links.
    if !local.ip().is_loopback() {
        if !allow_remote {
            return Err(CliError::Refused(format!(
                "{local} is reachable from other machines and the proxy API has no authentication; \
                 listen on 127.0.0.1, or pass --allow-remote on a network you trust"
            )));
        }
        eprintln!("warning: the fault proxy API on {local} has no authentication; anyone who reaches it can fault this machine's links");
    }
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
