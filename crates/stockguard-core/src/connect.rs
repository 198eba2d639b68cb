//! Opening the sale's MySQL and Redis from resolved [`ConnectionSettings`].
//!
//! Failures are classified (unreachable, refused credentials, unknown database, malformed
//! URL, a TLS handshake refused) so that the CLI and the desktop app can say in one line what
//! to do about them. TLS comes from the settings' [`Tls`](crate::profile::Tls): MySQL's mode,
//! CA and client certificate go to sqlx's options ([`mysql_options_with`]), Redis's to the
//! link ([`connect_redis`]); [`Connections::transport`] says what the connection used. With an
//! SSH bastion in the settings, each server's host and port become a loopback forward through
//! it ([`crate::ssh_tunnel`]) before connecting; messages keep naming the servers themselves.

use std::str::FromStr as _;
use std::time::Duration;

use secrecy::ExposeSecret as _;
use sqlx::mysql::{MySqlConnectOptions, MySqlPool, MySqlPoolOptions, MySqlSslMode};

use crate::keys::Keys;
use crate::profile::{ConnectionSettings, MysqlTls, SslMode};
use crate::redis_link::{LinkTimeouts, RedisLink};
use crate::tls::Transport;

/// How long to wait for a server before calling it unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The embedded migrations (`migrations/`).
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The SSH bastion could not be reached, refused our key, or offered a host key we do
    /// not trust.
    #[error(transparent)]
    Bastion(Box<crate::ssh_tunnel::TunnelError>),
    /// A Redis Cluster's nodes announce their own addresses, which one forward does not reach.
    #[error("Redis at {url} is a cluster (several seed nodes): a cluster cannot be reached through an SSH bastion, whose forward reaches one address only")]
    ClusterThroughBastion { url: String },
    #[error("malformed MySQL URL {url}: {reason}")]
    MalformedMysqlUrl { url: String, reason: String },
    #[error("malformed Redis URL {url}: {reason}")]
    MalformedRedisUrl { url: String, reason: String },
    #[error(
        "cannot reach MySQL at {url}: {reason} (is the server running? `stockguard sandbox up` starts a local one)"
    )]
    MysqlUnreachable { url: String, reason: String },
    #[error("MySQL at {url} refused the credentials: {reason}")]
    MysqlAccessDenied { url: String, reason: String },
    #[error("MySQL at {url} has no such database: {reason} (`stockguard migrate` creates the tables; create the database first)")]
    MysqlUnknownDatabase { url: String, reason: String },
    #[error("MySQL at {url}: {reason}")]
    Mysql { url: String, reason: String },
    #[error(
        "cannot reach Redis at {url}: {reason} (is the server running? `stockguard sandbox up` starts a local one)"
    )]
    RedisUnreachable { url: String, reason: String },
    /// The TLS handshake failed: a certificate the pinned CA did not sign, a name that does
    /// not match, or a client certificate the server refused.
    #[error("MySQL at {url} refused TLS: {reason} (check the CA, --mysql-ca or STOCKGUARD_MYSQL_CA, and the client certificate, --mysql-cert/--mysql-key)")]
    MysqlTls { url: String, reason: String },
    #[error("Redis at {url} refused TLS: {reason} (check the CA, --redis-ca or STOCKGUARD_REDIS_CA, and the client certificate, --redis-cert/--redis-key)")]
    RedisTls { url: String, reason: String },
    #[error(transparent)]
    TlsFile(#[from] crate::tls::TlsFileError),
    #[error("migrating {url} failed: {reason}")]
    Migrate { url: String, reason: String },
    /// MySQL 8 (binary logging is on by default) and MariaDB with binary logging refuse to
    /// create a trigger unless the user has SUPER or `log_bin_trust_function_creators` is on;
    /// the audit log's append-only triggers are such triggers.
    #[error(
        "migrating {url}: the server has binary logging on, so creating the audit log's append-only triggers \
         needs the SUPER privilege, or the server setting log_bin_trust_function_creators = 1 (on RDS or Aurora: \
         the DB parameter group). Do one of them, then, because MySQL cannot roll back DDL, remove what the failed \
         step left: DELETE FROM _sqlx_migrations WHERE version = {version} AND success = 0; \
         DROP TRIGGER IF EXISTS audit_log_refuses_update; DROP TRIGGER IF EXISTS audit_log_refuses_delete; \
         DROP TABLE IF EXISTS audit_log, rewrite_runs; and run `stockguard migrate` again"
    )]
    MigrateNeedsTriggerPrivilege { url: String, version: i64 },
}

impl From<crate::ssh_tunnel::TunnelError> for ConnectError {
    fn from(err: crate::ssh_tunnel::TunnelError) -> Self {
        Self::Bastion(Box::new(err))
    }
}

/// MySQL/MariaDB `ER_BINLOG_CREATE_ROUTINE_NEED_SUPER`.
const NEED_SUPER_FOR_TRIGGER: u16 = 1419;

/// An open connection to one sale: the DB pool, a Redis connection and the key names.
#[derive(Clone)]
pub struct Connections {
    pub mysql: MySqlPool,
    /// One server or a cluster (a comma-separated URL): [`RedisLink`].
    pub redis: RedisLink,
    pub keys: Keys,
    pub settings: ConnectionSettings,
    /// What the connection used: MySQL's mode and cipher, Redis over TLS or not.
    pub transport: Transport,
}

impl std::fmt::Debug for Connections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connections")
            .field("mysql", &self.settings.mysql_display())
            .field("redis", &self.settings.redis_display())
            .field("keys", &self.keys)
            .finish()
    }
}

impl Connections {
    /// Connects to both servers; fails with a classified error if either cannot be reached.
    pub async fn open(settings: ConnectionSettings) -> Result<Self, ConnectError> {
        let mysql = connect_mysql(&settings).await?;
        let redis = connect_redis(&settings).await?;
        let transport = transport(&mysql, &settings).await?;
        Ok(Self { mysql, redis, keys: Keys::new(settings.key_prefix.clone()), settings, transport })
    }

    /// Applies the embedded migrations.
    pub async fn migrate(&self) -> Result<(), ConnectError> {
        migrate(&self.mysql, &self.settings.mysql_display()).await
    }
}

/// What a connection test measured: one round trip to each server.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Probe {
    pub mysql_version: String,
    pub mysql_ms: f64,
    pub redis_ms: f64,
    /// What the connection used (TLS mode, cipher), as `profile show` says it.
    pub transport: Transport,
    /// The same, in one line.
    pub transport_line: String,
}

/// Connects with `settings` and times one query on each server: the "Test" of a profile.
pub async fn probe(settings: ConnectionSettings) -> Result<Probe, ConnectError> {
    let conns = Connections::open(settings).await?;
    let started = std::time::Instant::now();
    let mysql_version: String = sqlx::query_scalar("SELECT VERSION()")
        .fetch_one(&conns.mysql)
        .await
        .map_err(|e| classify_mysql_error(&conns.settings.mysql_display(), e))?;
    let mysql_ms = started.elapsed().as_secs_f64() * 1000.0;
    let started = std::time::Instant::now();
    let mut redis = conns.redis.clone();
    let _: String = redis::cmd("PING")
        .query_async(&mut redis)
        .await
        .map_err(|e| ConnectError::RedisUnreachable { url: conns.settings.redis_display(), reason: e.to_string() })?;
    let redis_ms = started.elapsed().as_secs_f64() * 1000.0;
    conns.mysql.close().await;
    let transport_line = conns.transport.to_string();
    Ok(Probe { mysql_version, mysql_ms, redis_ms, transport: conns.transport, transport_line })
}

/// Applies the embedded migrations to a pool.
pub async fn migrate(pool: &MySqlPool, url_for_messages: &str) -> Result<(), ConnectError> {
    MIGRATOR.run(pool).await.map_err(|e| {
        let url = url_for_messages.to_string();
        match &e {
            sqlx::migrate::MigrateError::ExecuteMigration(db, version)
                if db
                    .as_database_error()
                    .and_then(|d| d.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
                    .is_some_and(|d| d.number() == NEED_SUPER_FOR_TRIGGER) =>
            {
                ConnectError::MigrateNeedsTriggerPrivilege { url, version: *version }
            }
            _ => ConnectError::Migrate { url, reason: e.to_string() },
        }
    })
}

/// Applies the embedded migrations unless every one is applied already: a role account (which
/// may not create tables, not even `CREATE TABLE IF NOT EXISTS` of the migrations' own table)
/// then opens an up-to-date database without asking for DDL rights.
pub async fn migrate_if_behind(pool: &MySqlPool, url_for_messages: &str) -> Result<(), ConnectError> {
    let applied: Vec<i64> = sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success")
        .fetch_all(pool)
        .await
        .unwrap_or_default();
    if MIGRATOR.iter().all(|m| applied.contains(&m.version)) {
        return Ok(());
    }
    migrate(pool, url_for_messages).await
}

/// Parses a MySQL URL into connect options, classifying a malformed one.
pub fn mysql_options(url: &str) -> Result<MySqlConnectOptions, ConnectError> {
    MySqlConnectOptions::from_str(url)
        .map_err(|e| ConnectError::MalformedMysqlUrl { url: crate::profile::redact(url), reason: e.to_string() })
}

/// [`mysql_options`] with a profile's TLS: its mode, CA and client certificate, when it names
/// any (else what the URL says, sqlx's `PREFERRED` by default).
pub fn mysql_options_with(url: &str, tls: &MysqlTls) -> Result<MySqlConnectOptions, ConnectError> {
    let mut options = mysql_options(url)?;
    if tls.is_empty() {
        return Ok(options);
    }
    options = options.ssl_mode(match tls.mode() {
        SslMode::Disabled => MySqlSslMode::Disabled,
        SslMode::Preferred => MySqlSslMode::Preferred,
        SslMode::Required => MySqlSslMode::Required,
        SslMode::VerifyCa => MySqlSslMode::VerifyCa,
        SslMode::VerifyIdentity => MySqlSslMode::VerifyIdentity,
    });
    if let Some(ca) = &tls.files.ca {
        options = options.ssl_ca(ca);
    }
    if let (Some(cert), Some(key)) = (&tls.files.cert, &tls.files.key) {
        options = options.ssl_client_cert(cert).ssl_client_key(key);
    }
    Ok(options)
}

/// The mode sqlx's options ask for, in the profile's words.
fn mode_of(options: &MySqlConnectOptions) -> SslMode {
    match options.get_ssl_mode() {
        MySqlSslMode::Disabled => SslMode::Disabled,
        MySqlSslMode::Preferred => SslMode::Preferred,
        MySqlSslMode::Required => SslMode::Required,
        MySqlSslMode::VerifyCa => SslMode::VerifyCa,
        MySqlSslMode::VerifyIdentity => SslMode::VerifyIdentity,
    }
}

/// What a connection of `settings` uses: the MySQL session's protocol and cipher, read back
/// from the server (`Ssl_version`, `Ssl_cipher`: empty when not encrypted), and Redis's scheme.
pub async fn transport(mysql: &MySqlPool, settings: &ConnectionSettings) -> Result<Transport, ConnectError> {
    let options = mysql_options_with(settings.mysql_url.expose_secret(), &settings.tls.mysql)?;
    let status: Vec<(String, String)> =
        sqlx::query_as("SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')")
            .fetch_all(mysql)
            .await
            .map_err(|e| classify_mysql_error(&settings.mysql_display(), e))?;
    let value = |name: &str| status.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap_or_default();
    let (version, cipher) = (value("Ssl_version"), value("Ssl_cipher"));
    let redis_url = settings.redis_url.expose_secret();
    let seeds = crate::redis_link::seeds(redis_url);
    Ok(Transport {
        mysql_mode: Some(mode_of(&options)),
        mysql_tls: (!cipher.is_empty()).then(|| format!("{version} {cipher}")),
        mysql_client_cert: settings.tls.mysql.files.cert.is_some() && !cipher.is_empty(),
        redis_tls: !seeds.is_empty() && seeds.iter().all(|s| s.starts_with("rediss://")),
        redis_ca_pinned: settings.tls.redis.ca.is_some(),
        redis_client_cert: settings.tls.redis.cert.is_some(),
        has_redis: !seeds.is_empty(),
    })
}

/// Opens a pool with the default size for the console.
pub async fn connect_mysql(settings: &ConnectionSettings) -> Result<MySqlPool, ConnectError> {
    let url = through_bastion(settings, settings.mysql_url.expose_secret(), 3306).await?;
    let options = mysql_options_with(&url, &settings.tls.mysql)?;
    // One direct connection first: a pool that cannot connect only says "timed out", while
    // this says "connection refused" or "access denied".
    let probe =
        tokio::time::timeout(CONNECT_TIMEOUT, <sqlx::MySqlConnection as sqlx::Connection>::connect_with(&options))
            .await
            .map_err(|_| ConnectError::MysqlUnreachable {
                url: settings.mysql_display(),
                reason: format!("no answer within {} s", CONNECT_TIMEOUT.as_secs()),
            })?
            .map_err(|e| classify_mysql_error(&settings.mysql_display(), e))?;
    let _ = sqlx::Connection::close(probe).await;
    MySqlPoolOptions::new()
        .max_connections(8)
        .acquire_timeout(CONNECT_TIMEOUT)
        .connect_with(options)
        .await
        .map_err(|e| classify_mysql_error(&settings.mysql_display(), e))
}

/// The profile's read replica, when it has one (for heavy reads such as the ledger check).
pub async fn connect_replica(settings: &ConnectionSettings) -> Result<Option<MySqlPool>, ConnectError> {
    let Some(url) = &settings.mysql_replica_url else { return Ok(None) };
    let display = crate::profile::redact(url.expose_secret());
    let url = through_bastion(settings, url.expose_secret(), 3306).await?;
    let options = mysql_options_with(&url, &settings.tls.mysql)?;
    MySqlPoolOptions::new()
        .max_connections(2)
        .acquire_timeout(CONNECT_TIMEOUT)
        .connect_with(options)
        .await
        .map(Some)
        .map_err(|e| classify_mysql_error(&display, e))
}

/// Turns a sqlx connect error into the kind a person can act on.
pub fn classify_mysql_error(url: &str, err: sqlx::Error) -> ConnectError {
    let url = url.to_string();
    if let Some(tls) = tls_failure(&err) {
        return ConnectError::MysqlTls { url, reason: tls_reason(tls) };
    }
    match &err {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::Tls(_) => {
            ConnectError::MysqlUnreachable { url, reason: err.to_string() }
        }
        sqlx::Error::Database(db) => {
            // MySQL error numbers: 1045/1698 access denied (SQLSTATE 28000), 1044 access
            // denied to a database, 1049 unknown database.
            let code = db.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>().map(|e| e.number());
            tracing::debug!(?code, sqlstate = ?db.code(), "MySQL refused the connection");
            let reason = db.message().to_string();
            let denied = db.code().as_deref() == Some("28000");
            match code {
                _ if denied => ConnectError::MysqlAccessDenied { url, reason },
                Some(1044) => ConnectError::MysqlAccessDenied { url, reason },
                Some(1049) => ConnectError::MysqlUnknownDatabase { url, reason },
                _ => ConnectError::Mysql { url, reason },
            }
        }
        _ => ConnectError::Mysql { url, reason: err.to_string() },
    }
}

/// Opens the sale's Redis (one server, or a cluster when the URL lists several seed nodes)
/// after one PING. The link reconnects, and on a cluster follows the topology, by itself.
pub async fn connect_redis(settings: &ConnectionSettings) -> Result<RedisLink, ConnectError> {
    let display = settings.redis_display();
    let url = settings.redis_url.expose_secret();
    if settings.ssh_tunnel.is_some() && crate::redis_link::seeds(url).len() > 1 {
        return Err(ConnectError::ClusterThroughBastion { url: display });
    }
    let url = &through_bastion(settings, url, 6379).await?;
    for seed in crate::redis_link::seeds(url) {
        redis::Client::open(seed)
            .map_err(|e| ConnectError::MalformedRedisUrl { url: display.clone(), reason: e.to_string() })?;
    }
    let certs = crate::tls::redis_certificates(&settings.tls.redis)?;
    let failed = |e: redis::RedisError| match tls_failure(&e) {
        Some(tls) => ConnectError::RedisTls { url: display.clone(), reason: tls_reason(tls) },
        None => ConnectError::RedisUnreachable { url: display.clone(), reason: e.to_string() },
    };
    let timeouts = LinkTimeouts { connect: CONNECT_TIMEOUT, response: CONNECT_TIMEOUT };
    let mut conn = tokio::time::timeout(CONNECT_TIMEOUT, RedisLink::open_with_tls(url, timeouts, certs.as_ref()))
        .await
        .map_err(|_| ConnectError::RedisUnreachable { url: display.clone(), reason: "timed out".into() })?
        .map_err(failed)?;
    // On a cluster PING goes to every node: all of them must answer.
    let _: String = redis::cmd("PING").query_async(&mut conn).await.map_err(failed)?;
    Ok(conn)
}

/// `url` as this process reaches it: unchanged without a bastion; with one, its host and
/// port are the loopback forward to them ([`crate::ssh_tunnel::forward_to`]), the rest
/// (user, password, database, query) kept.
async fn through_bastion(settings: &ConnectionSettings, url: &str, default_port: u16) -> Result<String, ConnectError> {
    let Some(bastion) = &settings.ssh_tunnel else { return Ok(url.to_string()) };
    let malformed = |reason: &str| {
        let url = crate::profile::redact(url);
        match default_port {
            6379 => ConnectError::MalformedRedisUrl { url, reason: reason.to_string() },
            _ => ConnectError::MalformedMysqlUrl { url, reason: reason.to_string() },
        }
    };
    let mut parsed = url::Url::parse(url).map_err(|e| malformed(&e.to_string()))?;
    let host = parsed.host_str().ok_or_else(|| malformed("no host"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']').to_string();
    let port = parsed.port().unwrap_or(default_port);
    let local = crate::ssh_tunnel::forward_to(bastion, &host, port).await?;
    parsed.set_host(Some(&local.ip().to_string())).map_err(|e| malformed(&e.to_string()))?;
    parsed.set_port(Some(local.port())).map_err(|()| malformed("cannot carry a port"))?;
    Ok(parsed.into())
}

/// What a failed handshake means for the person connecting, with rustls's own words after it.
fn tls_reason(err: &rustls::Error) -> String {
    use rustls::{AlertDescription as Alert, CertificateError as Cert};
    let meaning = match err {
        rustls::Error::InvalidCertificate(Cert::UnknownIssuer | Cert::BadSignature) => {
            "the server's certificate is not signed by the CA we trust"
        }
        rustls::Error::InvalidCertificate(Cert::NotValidForName | Cert::NotValidForNameContext { .. }) => {
            "the server's certificate does not name the host connected to"
        }
        rustls::Error::InvalidCertificate(Cert::Expired | Cert::ExpiredContext { .. }) => {
            "the server's certificate has expired"
        }
        rustls::Error::AlertReceived(
            Alert::UnknownCA | Alert::BadCertificate | Alert::CertificateRequired | Alert::CertificateUnknown,
        ) => "the server did not accept our client certificate",
        _ => return err.to_string(),
    };
    format!("{meaning} ({err})")
}

/// The TLS error under `err`, if a TLS handshake is what failed: found by walking the error's
/// causes (an I/O error carries rustls's own), never by reading its text.
pub fn tls_failure<'e>(err: &'e (dyn std::error::Error + 'static)) -> Option<&'e rustls::Error> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cause {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            if let Some(tls) = io.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
                return Some(tls);
            }
        }
        cause = e.source();
    }
    None
}
