//! Toxiproxy's HTTP API from the drill runner's side: the same calls drive our
//! `stockguard drill proxy serve` and a real Toxiproxy.
//!
//! A fault the runner wants to last is *held* ([`ProxyApi::hold`]): it is set, then set again
//! every `renew_every`, which renews its lease on our service. The holder restores it when the
//! drill is done with it ([`Held::restore`]). A runner that dies stops renewing: the service
//! ends the fault when its lease runs out, so no fault outlives its runner by more than a
//! lease. (A real Toxiproxy has no leases: there, only `restore` or `/reset` ends a fault.)

use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use tokio::task::JoinHandle;

use super::service::{NewProxy, ProxyView};
use super::toxics::Toxic;

/// Why a call to the proxy API failed.
#[derive(Debug, thiserror::Error)]
pub enum ProxyApiError {
    #[error("the fault proxy API at {api} cannot be reached: {source}")]
    Unreachable { api: String, source: reqwest::Error },
    #[error("the fault proxy API refused {what} ({status}): {error}")]
    Refused { what: String, status: u16, error: String },
}

/// A client of one proxy API (`host:port`).
#[derive(Debug, Clone)]
pub struct ProxyApi {
    api: String,
    http: reqwest::Client,
}

/// A fault held on a proxy.
#[derive(Debug, Clone)]
pub enum HeldFault {
    Toxic(Toxic),
    /// The proxy disabled: its port closed and its connections dropped.
    Disabled,
}

impl ProxyApi {
    pub fn new(api: &str) -> Self {
        Self { api: api.to_string(), http: reqwest::Client::new() }
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> Result<Option<T>, ProxyApiError> {
        let mut request = self.http.request(method.clone(), format!("http://{}{path}", self.api));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let unreachable = |source| ProxyApiError::Unreachable { api: self.api.clone(), source };
        let response = request.send().await.map_err(unreachable)?;
        let status = response.status();
        if !status.is_success() {
            let answer: serde_json::Value = response.json().await.unwrap_or_default();
            let error = answer["error"].as_str().map_or_else(|| answer.to_string(), str::to_string);
            return Err(ProxyApiError::Refused { what: format!("{method} {path}"), status: status.as_u16(), error });
        }
        if status == reqwest::StatusCode::NO_CONTENT {
            return Ok(None);
        }
        response.json().await.map(Some).map_err(unreachable)
    }

    /// Makes the API hold these proxies (Toxiproxy's `/populate`).
    pub async fn populate(&self, proxies: &[NewProxy]) -> Result<Vec<ProxyView>, ProxyApiError> {
        #[derive(serde::Deserialize)]
        struct Populated {
            proxies: Vec<ProxyView>,
        }
        let body = serde_json::to_value(proxies).expect("proxies serialize");
        let populated: Option<Populated> = self.call(reqwest::Method::POST, "/populate", Some(body)).await?;
        Ok(populated.map(|p| p.proxies).unwrap_or_default())
    }

    /// Every proxy the API holds.
    pub async fn all(&self) -> Result<Vec<ProxyView>, ProxyApiError> {
        let all: Option<std::collections::BTreeMap<String, ProxyView>> =
            self.call(reqwest::Method::GET, "/proxies", None).await?;
        Ok(all.map(|m| m.into_values().collect()).unwrap_or_default())
    }

    pub async fn proxy(&self, name: &str) -> Result<ProxyView, ProxyApiError> {
        let shown = self.call(reqwest::Method::GET, &format!("/proxies/{name}"), None).await?;
        shown.ok_or_else(|| ProxyApiError::Refused {
            what: format!("GET /proxies/{name}"),
            status: 204,
            error: "no body".into(),
        })
    }

    /// Sets `fault` on `proxy`, or sets it again (which renews its lease).
    pub async fn set(&self, proxy: &str, fault: &HeldFault) -> Result<(), ProxyApiError> {
        match fault {
            HeldFault::Disabled => {
                let body = serde_json::json!({ "enabled": false });
                self.call::<serde_json::Value>(reqwest::Method::POST, &format!("/proxies/{proxy}"), Some(body)).await?;
            }
            HeldFault::Toxic(toxic) => {
                let path = format!("/proxies/{proxy}/toxics/{}", toxic.name);
                let shown = serde_json::to_value(toxic).expect("a toxic serializes");
                let again = serde_json::json!({ "attributes": shown["attributes"], "toxicity": toxic.toxicity });
                match self.call::<serde_json::Value>(reqwest::Method::POST, &path, Some(again)).await {
                    Err(ProxyApiError::Refused { status: 404, .. }) => {
                        let path = format!("/proxies/{proxy}/toxics");
                        self.call::<serde_json::Value>(reqwest::Method::POST, &path, Some(shown)).await?;
                    }
                    other => {
                        other?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Ends `fault` on `proxy` now. A fault already gone (its lease ran out) is no error.
    pub async fn clear(&self, proxy: &str, fault: &HeldFault) -> Result<(), ProxyApiError> {
        let cleared = match fault {
            HeldFault::Disabled => {
                let body = serde_json::json!({ "enabled": true });
                self.call::<serde_json::Value>(reqwest::Method::POST, &format!("/proxies/{proxy}"), Some(body)).await
            }
            HeldFault::Toxic(toxic) => {
                let path = format!("/proxies/{proxy}/toxics/{}", toxic.name);
                self.call::<serde_json::Value>(reqwest::Method::DELETE, &path, None).await
            }
        };
        match cleared {
            Ok(_) | Err(ProxyApiError::Refused { status: 404, .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Every proxy enabled, every toxic gone.
    pub async fn reset(&self) -> Result<(), ProxyApiError> {
        self.call::<serde_json::Value>(reqwest::Method::POST, "/reset", None).await.map(drop)
    }

    /// Sets `fault` on `proxy` and keeps setting it every `renew_every` (a third of the
    /// service's lease leaves two renewals of slack) until restored or dropped.
    pub async fn hold(
        self: &Arc<Self>,
        proxy: &str,
        fault: HeldFault,
        renew_every: Duration,
    ) -> Result<Held, ProxyApiError> {
        self.set(proxy, &fault).await?;
        let (api, name, renewed) = (self.clone(), proxy.to_string(), fault.clone());
        let renewal = tokio::spawn(async move {
            let mut tick = tokio::time::interval(renew_every);
            tick.tick().await;
            loop {
                tick.tick().await;
                if let Err(e) = api.set(&name, &renewed).await {
                    // The lease covers a missed renewal or two; say so, keep trying.
                    tracing::warn!(proxy = %name, error = %e, "cannot renew a held fault");
                }
            }
        });
        Ok(Held { api: self.clone(), proxy: proxy.to_string(), fault, renewal })
    }
}

/// A fault kept on a proxy by its renewals. Dropped without [`Held::restore`], it stops being
/// renewed and ends with its lease, as when the runner dies.
pub struct Held {
    api: Arc<ProxyApi>,
    proxy: String,
    fault: HeldFault,
    renewal: JoinHandle<()>,
}

impl Held {
    /// Stops renewing the fault and ends it now.
    pub async fn restore(self) -> Result<(), ProxyApiError> {
        self.renewal.abort();
        self.api.clear(&self.proxy, &self.fault).await
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.renewal.abort();
    }
}
