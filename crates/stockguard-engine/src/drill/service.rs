//! The fault proxy as a service (`stockguard drill proxy serve`): proxies in front of a
//! sale's Redis and MySQL, driven through Toxiproxy's HTTP API, so that a staging environment
//! can put it in front of its own servers, existing Toxiproxy clients can drive it, and our
//! drill runner can drive a real Toxiproxy the same way.
//!
//! The API (Toxiproxy's, the part drills need): `GET /version`; `GET /proxies`,
//! `POST /proxies`, `POST /populate`; `GET|POST|DELETE /proxies/{proxy}` (`POST` changes
//! `enabled`); `GET|POST /proxies/{proxy}/toxics`; `GET|POST|DELETE
//! /proxies/{proxy}/toxics/{toxic}`; `POST /reset` (every proxy enabled, every toxic gone).
//! Errors are `{"error": ..., "status": ...}` with that status.
//!
//! **Leases**, our addition: with a lease, every fault (a toxic, a disabled proxy) lasts that
//! long after it was last set, unless set again. A runner renews the faults it keeps by
//! posting them again; a runner that dies leaves no fault behind for longer than the lease.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::link::Link;
use super::toxics::{NewToxic, Toxic};

/// What a proxy is and does, as the API shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProxyView {
    pub name: String,
    pub listen: String,
    pub upstream: String,
    pub enabled: bool,
    pub toxics: Vec<Toxic>,
}

/// A proxy as a client asks for it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NewProxy {
    pub name: String,
    pub listen: String,
    pub upstream: String,
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
}

fn enabled_by_default() -> bool {
    true
}

/// A change to a proxy: Toxiproxy lets `enabled` change (and, restarting the proxy, listen
/// and upstream; not needed by drills, refused here with a clear error).
#[derive(Debug, Deserialize)]
pub struct ProxyChange {
    pub enabled: Option<bool>,
    pub listen: Option<String>,
    pub upstream: Option<String>,
}

/// A toxic's changed attributes or toxicity (`POST /proxies/{proxy}/toxics/{toxic}`).
#[derive(Debug, Deserialize)]
pub struct ToxicChange {
    pub attributes: Option<serde_json::Value>,
    pub toxicity: Option<f32>,
}

struct Entry {
    link: Link,
    /// When each toxic's lease runs out.
    toxic_leases: HashMap<String, Instant>,
    /// When a disabled proxy's lease runs out (it is enabled again).
    disabled_lease: Option<Instant>,
}

impl Entry {
    fn view(&self, name: &str) -> ProxyView {
        ProxyView {
            name: name.to_string(),
            listen: self.link.listen().to_string(),
            upstream: self.link.upstream().to_string(),
            enabled: self.link.enabled(),
            toxics: self.link.toxics(),
        }
    }
}

/// Every proxy of the service, by name.
pub struct Proxies {
    entries: Mutex<BTreeMap<String, Entry>>,
    lease: Option<Duration>,
}

/// Why the API refused a request: its status and message.
#[derive(Debug)]
pub struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.1, "status": self.0.as_u16() });
        (self.0, Json(body)).into_response()
    }
}

fn not_found(what: &str) -> ApiError {
    ApiError(StatusCode::NOT_FOUND, format!("{what} not found"))
}

impl Proxies {
    /// No proxies yet; faults last `lease` after they were last set (`None`: until removed).
    pub fn new(lease: Option<Duration>) -> Arc<Self> {
        Arc::new(Self { entries: Mutex::new(BTreeMap::new()), lease })
    }

    fn expiry(&self) -> Option<Instant> {
        self.lease.map(|lease| Instant::now() + lease)
    }

    /// Starts a proxy; a name already in use is a conflict.
    pub async fn create(&self, new: NewProxy) -> Result<ProxyView, ApiError> {
        if self.entries.lock().unwrap().contains_key(&new.name) {
            return Err(ApiError(StatusCode::CONFLICT, format!("proxy {} already exists", new.name)));
        }
        if new.name.is_empty() || new.name.contains('/') {
            return Err(ApiError(
                StatusCode::BAD_REQUEST,
                format!("a proxy's name may not be empty nor hold '/': {:?}", new.name),
            ));
        }
        let link = Link::start(&new.listen, new.upstream, true)
            .await
            .map_err(|e| ApiError(StatusCode::BAD_REQUEST, format!("cannot listen on {}: {e}", new.listen)))?;
        let mut entry = Entry { link, toxic_leases: HashMap::new(), disabled_lease: None };
        if !new.enabled {
            entry.link.set_enabled(false);
            entry.disabled_lease = self.expiry();
        }
        let mut entries = self.entries.lock().unwrap();
        if entries.contains_key(&new.name) {
            return Err(ApiError(StatusCode::CONFLICT, format!("proxy {} already exists", new.name)));
        }
        let view = entry.view(&new.name);
        entries.insert(new.name, entry);
        Ok(view)
    }

    /// Makes the service hold exactly these proxies where they are named: one of the same
    /// name that listens or forwards elsewhere is replaced, others are left as they are.
    pub async fn populate(&self, wanted: Vec<NewProxy>) -> Result<Vec<ProxyView>, ApiError> {
        let mut views = Vec::new();
        for new in wanted {
            let same = self
                .entries
                .lock()
                .unwrap()
                .get(&new.name)
                .is_some_and(|e| e.link.upstream() == new.upstream && listens_on(e.link.listen(), &new.listen));
            if same {
                views.push(
                    self.change(&new.name, ProxyChange { enabled: Some(new.enabled), listen: None, upstream: None })?,
                );
                continue;
            }
            self.entries.lock().unwrap().remove(&new.name);
            views.push(self.create(new).await?);
        }
        Ok(views)
    }

    pub fn all(&self) -> BTreeMap<String, ProxyView> {
        self.entries.lock().unwrap().iter().map(|(name, e)| (name.clone(), e.view(name))).collect()
    }

    pub fn get(&self, name: &str) -> Result<ProxyView, ApiError> {
        self.entries.lock().unwrap().get(name).map(|e| e.view(name)).ok_or_else(|| not_found("proxy"))
    }

    /// Enables or disables a proxy; disabling again renews its lease.
    pub fn change(&self, name: &str, change: ProxyChange) -> Result<ProxyView, ApiError> {
        let mut entries = self.entries.lock().unwrap();
        let entry = entries.get_mut(name).ok_or_else(|| not_found("proxy"))?;
        let moved = change.listen.as_deref().is_some_and(|l| !listens_on(entry.link.listen(), l))
            || change.upstream.as_deref().is_some_and(|u| u != entry.link.upstream());
        if moved {
            return Err(ApiError(
                StatusCode::BAD_REQUEST,
                "this proxy cannot move: delete it and create it again with the new listen or upstream".into(),
            ));
        }
        if let Some(enabled) = change.enabled {
            entry.link.set_enabled(enabled);
            entry.disabled_lease = if enabled { None } else { self.expiry() };
        }
        Ok(entry.view(name))
    }

    pub fn delete(&self, name: &str) -> Result<(), ApiError> {
        self.entries.lock().unwrap().remove(name).map(drop).ok_or_else(|| not_found("proxy"))
    }

    pub fn toxics(&self, proxy: &str) -> Result<Vec<Toxic>, ApiError> {
        Ok(self.get(proxy)?.toxics)
    }

    pub fn toxic(&self, proxy: &str, toxic: &str) -> Result<Toxic, ApiError> {
        self.toxics(proxy)?.into_iter().find(|t| t.name == toxic).ok_or_else(|| not_found("toxic"))
    }

    /// Adds a toxic; a name already on the proxy is a conflict.
    pub fn add_toxic(&self, proxy: &str, new: NewToxic) -> Result<Toxic, ApiError> {
        let toxic = new.into_toxic().map_err(|e| ApiError(StatusCode::BAD_REQUEST, e))?;
        let mut entries = self.entries.lock().unwrap();
        let entry = entries.get_mut(proxy).ok_or_else(|| not_found("proxy"))?;
        let mut toxics = entry.link.toxics();
        if toxics.iter().any(|t| t.name == toxic.name) {
            return Err(ApiError(StatusCode::CONFLICT, format!("toxic {} already exists", toxic.name)));
        }
        toxics.push(toxic.clone());
        entry.link.set_toxics(toxics);
        if let Some(at) = self.expiry() {
            entry.toxic_leases.insert(toxic.name.clone(), at);
        }
        Ok(toxic)
    }

    /// Changes a toxic's attributes or toxicity, and renews its lease.
    pub fn change_toxic(&self, proxy: &str, name: &str, change: ToxicChange) -> Result<Toxic, ApiError> {
        let mut entries = self.entries.lock().unwrap();
        let entry = entries.get_mut(proxy).ok_or_else(|| not_found("proxy"))?;
        let mut toxics = entry.link.toxics();
        let toxic = toxics.iter_mut().find(|t| t.name == name).ok_or_else(|| not_found("toxic"))?;
        let mut shown = serde_json::to_value(&*toxic).expect("a toxic serializes");
        if let Some(attributes) = change.attributes {
            shown["attributes"] = attributes;
        }
        if let Some(toxicity) = change.toxicity {
            shown["toxicity"] = toxicity.into();
        }
        let changed = serde_json::from_value::<NewToxic>(shown)
            .map_err(|e| ApiError(StatusCode::BAD_REQUEST, format!("bad attributes: {e}")))?
            .into_toxic()
            .map_err(|e| ApiError(StatusCode::BAD_REQUEST, e))?;
        *toxic = changed.clone();
        entry.link.set_toxics(toxics);
        if let Some(at) = self.expiry() {
            entry.toxic_leases.insert(name.to_string(), at);
        }
        Ok(changed)
    }

    pub fn remove_toxic(&self, proxy: &str, name: &str) -> Result<(), ApiError> {
        let mut entries = self.entries.lock().unwrap();
        let entry = entries.get_mut(proxy).ok_or_else(|| not_found("proxy"))?;
        let mut toxics = entry.link.toxics();
        let before = toxics.len();
        toxics.retain(|t| t.name != name);
        if toxics.len() == before {
            return Err(not_found("toxic"));
        }
        entry.link.set_toxics(toxics);
        entry.toxic_leases.remove(name);
        Ok(())
    }

    /// Every proxy enabled, every toxic gone.
    pub fn reset(&self) {
        for entry in self.entries.lock().unwrap().values_mut() {
            entry.link.set_enabled(true);
            entry.link.set_toxics(Vec::new());
            entry.toxic_leases.clear();
            entry.disabled_lease = None;
        }
    }

    /// Ends the faults whose lease ran out by `now`; says which.
    pub fn expire(&self, now: Instant) -> Vec<String> {
        let mut ended = Vec::new();
        for (name, entry) in self.entries.lock().unwrap().iter_mut() {
            if entry.disabled_lease.is_some_and(|at| at <= now) {
                entry.link.set_enabled(true);
                entry.disabled_lease = None;
                ended.push(format!("proxy {name} enabled again"));
            }
            let expired: Vec<String> =
                entry.toxic_leases.iter().filter(|(_, at)| **at <= now).map(|(t, _)| t.clone()).collect();
            if !expired.is_empty() {
                let mut toxics = entry.link.toxics();
                toxics.retain(|t| !expired.contains(&t.name));
                entry.link.set_toxics(toxics);
                for toxic in expired {
                    entry.toxic_leases.remove(&toxic);
                    ended.push(format!("toxic {toxic} of proxy {name} removed"));
                }
            }
        }
        ended
    }
}

/// Whether a proxy listening on `addr` is the one asked to listen on `wanted` (`host:port`,
/// where port 0 asks for any).
fn listens_on(addr: std::net::SocketAddr, wanted: &str) -> bool {
    wanted.rsplit_once(':').and_then(|(_, port)| port.parse::<u16>().ok()).is_some_and(|p| p == 0 || p == addr.port())
}

/// The HTTP API over `proxies`.
pub fn router(proxies: Arc<Proxies>) -> Router {
    Router::new()
        .route(
            "/version",
            get(|| async { Json(serde_json::json!({ "version": concat!("stockguard-", env!("CARGO_PKG_VERSION")) })) }),
        )
        .route("/reset", post(reset))
        .route("/populate", post(populate))
        .route("/proxies", get(all).post(create))
        .route("/proxies/{proxy}", get(one).post(change).delete(delete))
        .route("/proxies/{proxy}/toxics", get(toxics).post(add_toxic))
        .route("/proxies/{proxy}/toxics/{toxic}", get(toxic).post(change_toxic).delete(remove_toxic))
        .with_state(proxies)
}

type Api = State<Arc<Proxies>>;

/// A JSON request body, whatever its `Content-Type` says, or without one: Toxiproxy reads
/// its bodies so, and its clients (and its own examples, `curl -d`) do not all send
/// `application/json`. A body that is not the JSON asked for is a 400 saying why.
struct Body<T>(T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> axum::extract::FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiError(StatusCode::BAD_REQUEST, format!("the request body could not be read: {e}")))?;
        serde_json::from_slice(&bytes)
            .map(Body)
            .map_err(|e| ApiError(StatusCode::BAD_REQUEST, format!("the body is not the JSON asked for: {e}")))
    }
}

async fn reset(State(p): Api) -> StatusCode {
    p.reset();
    StatusCode::NO_CONTENT
}

async fn populate(State(p): Api, Body(wanted): Body<Vec<NewProxy>>) -> Result<impl IntoResponse, ApiError> {
    let proxies = p.populate(wanted).await?;
    Ok((StatusCode::CREATED, Json(serde_json::json!({ "proxies": proxies }))))
}

async fn all(State(p): Api) -> Json<BTreeMap<String, ProxyView>> {
    Json(p.all())
}

async fn create(State(p): Api, Body(new): Body<NewProxy>) -> Result<impl IntoResponse, ApiError> {
    Ok((StatusCode::CREATED, Json(p.create(new).await?)))
}

async fn one(State(p): Api, Path(proxy): Path<String>) -> Result<Json<ProxyView>, ApiError> {
    p.get(&proxy).map(Json)
}

async fn change(
    State(p): Api,
    Path(proxy): Path<String>,
    Body(c): Body<ProxyChange>,
) -> Result<Json<ProxyView>, ApiError> {
    p.change(&proxy, c).map(Json)
}

async fn delete(State(p): Api, Path(proxy): Path<String>) -> Result<StatusCode, ApiError> {
    p.delete(&proxy).map(|()| StatusCode::NO_CONTENT)
}

async fn toxics(State(p): Api, Path(proxy): Path<String>) -> Result<Json<Vec<Toxic>>, ApiError> {
    p.toxics(&proxy).map(Json)
}

async fn add_toxic(State(p): Api, Path(proxy): Path<String>, Body(t): Body<NewToxic>) -> Result<Json<Toxic>, ApiError> {
    p.add_toxic(&proxy, t).map(Json)
}

async fn toxic(State(p): Api, Path((proxy, toxic)): Path<(String, String)>) -> Result<Json<Toxic>, ApiError> {
    p.toxic(&proxy, &toxic).map(Json)
}

async fn change_toxic(
    State(p): Api,
    Path((proxy, toxic)): Path<(String, String)>,
    Body(c): Body<ToxicChange>,
) -> Result<Json<Toxic>, ApiError> {
    p.change_toxic(&proxy, &toxic, c).map(Json)
}

async fn remove_toxic(State(p): Api, Path((proxy, toxic)): Path<(String, String)>) -> Result<StatusCode, ApiError> {
    p.remove_toxic(&proxy, &toxic).map(|()| StatusCode::NO_CONTENT)
}

/// Serves the API on `listener` until `shutdown`, ending the faults whose lease ran out
/// (looked at every tenth of the lease, between every 100 ms and every second).
pub async fn serve(
    listener: tokio::net::TcpListener,
    proxies: Arc<Proxies>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let sweeper = proxies.lease.map(|lease| {
        let proxies = proxies.clone();
        let every = (lease / 10).clamp(Duration::from_millis(100), Duration::from_secs(1));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                for ended in proxies.expire(Instant::now()) {
                    tracing::warn!("fault lease ran out: {ended}");
                }
            }
        })
    });
    let served = axum::serve(listener, router(proxies)).with_graceful_shutdown(shutdown).await;
    if let Some(sweeper) = sweeper {
        sweeper.abort();
    }
    served
}
