//! `sandbox up` and `sandbox down`.

use std::path::{Path, PathBuf};

use secrecy::ExposeSecret as _;
use serde::Serialize;
use sqlx::{Connection as _, MySqlConnection};

use super::state::SandboxState;
use super::{cluster, process, SandboxError};
use stockguard_core::connect::{self, mysql_options, ConnectError};
use stockguard_core::profile::{ConnectionSettings, EnvironmentKind, Profile, ProfileStore, Role};

/// Where the sandbox should look for servers before starting its own.
#[derive(Debug, Clone)]
pub struct UpOptions {
    pub dir: PathBuf,
    /// Target MySQL URL, database included (created if missing).
    pub mysql_url: String,
    pub redis_url: String,
    pub key_prefix: String,
    /// Start (or reuse) a private Redis Cluster instead of using one Redis server.
    pub redis_cluster: bool,
    /// Where to write the `sandbox` profile; `None` writes none.
    pub profile_store: Option<PathBuf>,
}

impl UpOptions {
    /// Defaults: the URLs from `STOCKGUARD_MYSQL_URL` / `STOCKGUARD_REDIS_URL`, else the
    /// machine's own servers on their standard ports, database `stockguard`.
    pub fn from_env(dir: PathBuf, profile_store: Option<PathBuf>) -> Self {
        let var = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
        Self {
            dir,
            mysql_url: var("STOCKGUARD_MYSQL_URL").unwrap_or_else(|| "mysql://root@127.0.0.1:3306/stockguard".into()),
            redis_url: var("STOCKGUARD_REDIS_URL").unwrap_or_else(|| "redis://127.0.0.1:6379/".into()),
            key_prefix: var("STOCKGUARD_KEY_PREFIX").unwrap_or_else(|| stockguard_core::keys::DEFAULT_PREFIX.into()),
            redis_cluster: false,
            profile_store,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct UpReport {
    pub mysql_url: String,
    pub redis_url: String,
    /// True when `up` started (or had started and found running) a private server.
    pub mysql_private: bool,
    pub redis_private: bool,
    pub profile_file: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DownReport {
    pub mysql_stopped: bool,
    pub redis_stopped: bool,
    pub redis_cluster_stopped: bool,
}

fn without_database(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            u.set_path("");
            u.to_string()
        }
        Err(_) => url.to_string(),
    }
}

fn database_name(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .map(|u| u.path().trim_start_matches('/').to_string())
        .filter(|db| !db.is_empty())
        .unwrap_or_else(|| "stockguard".to_string())
}

fn with_port(url: &str, port: u16, database: Option<&str>) -> String {
    let mut u = url::Url::parse(url).expect("validated before");
    let _ = u.set_host(Some("127.0.0.1"));
    let _ = u.set_port(Some(port));
    let _ = u.set_password(None);
    if let Some(db) = database {
        u.set_path(&format!("/{db}"));
    }
    u.to_string()
}

/// Reachability of a MySQL server: `Ok(true)` reachable, `Ok(false)` nothing listening,
/// `Err` reachable but refusing (bad credentials): that is not fixed by starting our own.
async fn mysql_reachable(url: &str) -> Result<bool, SandboxError> {
    let options = mysql_options(&without_database(url))?;
    match tokio::time::timeout(std::time::Duration::from_secs(3), MySqlConnection::connect_with(&options)).await {
        Err(_) => Ok(false),
        Ok(Ok(conn)) => {
            let _ = conn.close().await;
            Ok(true)
        }
        Ok(Err(e)) => match connect::classify_mysql_error(&stockguard_core::profile::redact(url), e) {
            ConnectError::MysqlUnreachable { .. } => Ok(false),
            ConnectError::MysqlAccessDenied { url, reason } | ConnectError::Mysql { url, reason } => {
                Err(SandboxError::MysqlRefused { url, reason })
            }
            other => Err(other.into()),
        },
    }
}

async fn redis_reachable(url: &str) -> Result<bool, SandboxError> {
    for seed in stockguard_core::redis_link::seeds(url) {
        redis::Client::open(seed).map_err(|e| ConnectError::MalformedRedisUrl {
            url: stockguard_core::profile::redact(url),
            reason: e.to_string(),
        })?;
    }
    let timeouts = stockguard_core::redis_link::LinkTimeouts {
        connect: std::time::Duration::from_secs(3),
        response: std::time::Duration::from_secs(3),
    };
    let attempt = async {
        let mut conn = stockguard_core::redis_link::RedisLink::open(url, timeouts).await?;
        redis::cmd("PING").query_async::<String>(&mut conn).await
    };
    Ok(matches!(tokio::time::timeout(std::time::Duration::from_secs(3), attempt).await, Ok(Ok(_))))
}

/// Brings the sandbox up: reuses reachable servers, otherwise starts private ones; creates
/// the database, migrates, and writes the `sandbox` profile. Running it twice is harmless.
pub async fn up(opts: &UpOptions, progress: &mut dyn FnMut(&str)) -> Result<UpReport, SandboxError> {
    stockguard_core::profile::parse_url("MySQL", &opts.mysql_url, stockguard_core::profile::MYSQL_SCHEMES)?;
    stockguard_core::profile::parse_redis_url("Redis", &opts.redis_url)?;
    // Refused before anything is started or written: a reused server's URL goes whole into
    // `.sandbox/env` and the profile.
    refuse_password("MySQL", &opts.mysql_url)?;
    refuse_password("Redis", &opts.redis_url)?;
    let mut state = SandboxState::load(&opts.dir)?;
    let database = database_name(&opts.mysql_url);

    // MySQL: a private server from an earlier `up` that still runs wins; then the configured
    // URL if something answers there; else a new private server.
    let (mysql_url, mysql_private) = match state.mysql.as_ref().filter(|s| process::is_ours(s)) {
        Some(server) => (with_port(&opts.mysql_url, server.port, Some(&database)), true),
        None if mysql_reachable(&opts.mysql_url).await? => (opts.mysql_url.clone(), false),
        None => {
            progress(&format!(
                "no MySQL answers at {}; starting a private mariadbd",
                stockguard_core::profile::redact(&opts.mysql_url)
            ));
            let server = process::start_mariadb(&opts.dir).await?;
            let url = with_port("mysql://root@127.0.0.1/", server.port, Some(&database));
            state.mysql = Some(server);
            state.save(&opts.dir)?;
            (url, true)
        }
    };
    let reused_cluster = state.redis_cluster.clone().map(|nodes| cluster::Cluster { nodes }).filter(cluster::is_ours);
    let (redis_url, redis_private) = match state.redis.as_ref().filter(|s| process::is_ours(s)) {
        _ if opts.redis_cluster => match reused_cluster {
            Some(running) => (running.url(), true),
            None => {
                progress("starting a private Redis Cluster (3 masters, 3 replicas)");
                let started = cluster::start(&opts.dir).await?;
                state.redis_cluster = Some(started.nodes.clone());
                state.save(&opts.dir)?;
                (started.url(), true)
            }
        },
        Some(server) => (with_port(&opts.redis_url, server.port, None), true),
        None if redis_reachable(&opts.redis_url).await? => (opts.redis_url.clone(), false),
        None => {
            progress(&format!(
                "no Redis answers at {}; starting a private redis-server",
                stockguard_core::profile::redact(&opts.redis_url)
            ));
            let server = process::start_redis(&opts.dir).await?;
            let url = with_port("redis://127.0.0.1/", server.port, None);
            state.redis = Some(server);
            state.save(&opts.dir)?;
            (url, true)
        }
    };

    progress(&format!("creating database `{database}` if missing and migrating"));
    let mut conn = MySqlConnection::connect_with(&mysql_options(&without_database(&mysql_url))?)
        .await
        .map_err(|e| connect::classify_mysql_error(&stockguard_core::profile::redact(&mysql_url), e))?;
    sqlx::query(&format!("CREATE DATABASE IF NOT EXISTS `{}`", database.replace('`', ""))).execute(&mut conn).await?;
    let _ = conn.close().await;
    let settings = ConnectionSettings::from_urls(EnvironmentKind::Sandbox, &mysql_url, &redis_url, &opts.key_prefix);
    let pool = connect::connect_mysql(&settings).await?;
    connect::migrate(&pool, &settings.mysql_display()).await?;
    pool.close().await;

    state.mysql_url = Some(stockguard_core::profile::redact(&mysql_url));
    state.redis_url = Some(stockguard_core::profile::redact(&redis_url));
    state.save(&opts.dir)?;
    write_env_file(&opts.dir, &settings)?;

    let profile_file = match &opts.profile_store {
        Some(path) => {
            let mut store = ProfileStore::load(path)?;
            store.upsert(
                "sandbox",
                Profile {
                    environment: EnvironmentKind::Sandbox,
                    mysql_url: mysql_url.clone(),
                    mysql_replica_url: None,
                    redis_url: redis_url.clone(),
                    key_prefix: opts.key_prefix.clone(),
                    role: Role::Admin,
                    read_only: false,
                    thresholds: Default::default(),
                    adapter: None,
                    state_url: None,
                    tls: Default::default(),
                    ssh_tunnel: None,
                    secrets: Default::default(),
                    passwords_from_env: Default::default(),
                },
            )?;
            store.save()?;
            Some(path.display().to_string())
        }
        None => None,
    };

    Ok(UpReport {
        mysql_url: stockguard_core::profile::redact(&mysql_url),
        redis_url: stockguard_core::profile::redact(&redis_url),
        mysql_private,
        redis_private,
        profile_file,
    })
}

/// A sandbox URL must not hold a password: the sandbox keeps its URLs in plain files.
fn refuse_password(what: &'static str, url: &str) -> Result<(), SandboxError> {
    let with_password = stockguard_core::redis_link::seeds(url)
        .into_iter()
        .any(|seed| url::Url::parse(seed).is_ok_and(|u| u.password().is_some()));
    if with_password {
        return Err(SandboxError::PasswordInUrl { what, url: stockguard_core::profile::redact(url) });
    }
    Ok(())
}

/// `.sandbox/env`: shell exports for scripts and `make test` (no secrets: the sandbox has none,
/// and a URL with a password is refused here too, whoever calls).
fn write_env_file(dir: &Path, settings: &ConnectionSettings) -> Result<(), SandboxError> {
    refuse_password("MySQL", settings.mysql_url.expose_secret())?;
    refuse_password("Redis", settings.redis_url.expose_secret())?;
    let path = dir.join("env");
    let mysql = settings.mysql_url.expose_secret();
    let text = format!(
        "export STOCKGUARD_MYSQL_URL='{mysql}'\nexport STOCKGUARD_REDIS_URL='{redis}'\nexport STOCKGUARD_KEY_PREFIX='{prefix}'\nexport STOCKGUARD_ENVIRONMENT=sandbox\n# for #[sqlx::test]: its user may create the per-test databases\nexport DATABASE_URL='{mysql}'\n",
        redis = settings.redis_url.expose_secret(),
        prefix = settings.key_prefix,
    );
    std::fs::write(&path, text).map_err(super::io_err(&path))
}

/// Stops only what `up` started; leaves machine services alone. Data folders are kept.
pub async fn down(dir: &Path) -> Result<DownReport, SandboxError> {
    let mut state = SandboxState::load(dir)?;
    let mut report = DownReport { mysql_stopped: false, redis_stopped: false, redis_cluster_stopped: false };
    if let Some(server) = state.mysql.take() {
        report.mysql_stopped = process::stop(&server).await?;
    }
    if let Some(server) = state.redis.take() {
        report.redis_stopped = process::stop(&server).await?;
    }
    if let Some(nodes) = state.redis_cluster.take() {
        report.redis_cluster_stopped = cluster::stop(&cluster::Cluster { nodes }).await?;
    }
    state.mysql_url = None;
    state.redis_url = None;
    state.save(dir)?;
    Ok(report)
}
