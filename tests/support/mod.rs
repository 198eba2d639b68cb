//! Test harness: a fresh database per test comes from `#[sqlx::test]` (with the migrations);
//! this module adds a unique Redis key prefix per test on the shared Redis, and turns a
//! missing server into a loud failure that says how to start it. Nothing here skips.

#![allow(dead_code)]

pub mod accounts;
pub mod drill_run;
pub mod keychain;
pub mod mariadb_server;
pub mod oversold;
pub mod redis_server;
pub mod sshd;
pub mod tls_servers;
pub mod waits;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::connect::Connections;
use stockguard_core::keys::Keys;
use stockguard_core::profile::{ConnectionSettings, EnvironmentKind};
use stockguard_core::redis_link::{LinkTimeouts, RedisLink};

/// The environment variables that override a profile's servers. `make test` exports some of
/// them for the test run itself; a binary a test starts on profiles of its own must not see
/// them.
pub const PROFILE_OVERRIDES: [&str; 22] = [
    "STOCKGUARD_PROFILE",
    "STOCKGUARD_MYSQL_URL",
    "STOCKGUARD_MYSQL_REPLICA_URL",
    "STOCKGUARD_REDIS_URL",
    "STOCKGUARD_KEY_PREFIX",
    "STOCKGUARD_ENVIRONMENT",
    "STOCKGUARD_ROLE",
    "STOCKGUARD_REDIS_CA",
    "STOCKGUARD_REDIS_CERT",
    "STOCKGUARD_REDIS_KEY",
    "STOCKGUARD_MYSQL_SSL_MODE",
    "STOCKGUARD_MYSQL_CA",
    "STOCKGUARD_MYSQL_CERT",
    "STOCKGUARD_MYSQL_KEY",
    "STOCKGUARD_MYSQL_PASSWORD",
    "STOCKGUARD_MYSQL_REPLICA_PASSWORD",
    "STOCKGUARD_REDIS_PASSWORD",
    "STOCKGUARD_STATE_PASSWORD",
    "STOCKGUARD_SSH_TUNNEL",
    "STOCKGUARD_SSH_KEY",
    "STOCKGUARD_SSH_KNOWN_HOSTS",
    "STOCKGUARD_SSH_KEY_PASSPHRASE",
];

/// The shared Redis of the test run.
pub fn redis_url() -> String {
    std::env::var("STOCKGUARD_TEST_REDIS_URL")
        .or_else(|_| std::env::var("STOCKGUARD_REDIS_URL"))
        .unwrap_or_else(|_| "redis://127.0.0.1:6379/".to_string())
}

/// The test Redis's address, for a proxy to put itself in front of.
pub fn redis_addr() -> std::net::SocketAddr {
    let url = url::Url::parse(&redis_url()).expect("the Redis URL is a URL");
    let host = url.host_str().unwrap_or("127.0.0.1").replace("localhost", "127.0.0.1");
    format!("{host}:{}", url.port().unwrap_or(6379)).parse().expect("the Redis address is host:port")
}

/// A key prefix no other test (or run) uses.
pub fn unique_prefix(tag: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("t{tag}{}x{}x{}", std::process::id(), nanos % 1_000_000_000, N.fetch_add(1, Ordering::Relaxed))
}

/// A unique key prefix on the shared Redis; its keys are deleted when it is dropped.
pub struct TestRedis {
    pub url: String,
    pub keys: Keys,
}

impl TestRedis {
    pub async fn new(tag: &str) -> Self {
        let url = redis_url();
        let timeouts = LinkTimeouts { connect: Duration::from_secs(5), response: Duration::from_secs(5) };
        let mut conn = RedisLink::open(&url, timeouts).await.unwrap_or_else(|e| {
            panic!(
                "Redis is not reachable at {url}: {e}. Start it (`make test` does), e.g. \
                 `redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no`"
            )
        });
        let _: String = redis::cmd("PING").query_async(&mut conn).await.expect("Redis answers PING");
        Self { url, keys: Keys::new(unique_prefix(tag)) }
    }

    /// A link to the test Redis: one server, or the cluster when the URL lists its nodes.
    pub async fn conn(&self) -> RedisLink {
        let timeouts = LinkTimeouts { connect: Duration::from_secs(5), response: Duration::from_secs(5) };
        RedisLink::open(&self.url, timeouts).await.expect("the test Redis is reachable")
    }
}

/// A blocking connection to the Redis at `url` (one server, or the cluster its seeds name),
/// for callbacks that cannot await.
pub fn blocking_conn(url: &str) -> Box<dyn redis::ConnectionLike> {
    let seeds = stockguard_core::redis_link::seeds(url);
    if seeds.len() > 1 {
        let client = redis::cluster::ClusterClient::new(seeds).expect("valid cluster seeds");
        Box::new(client.get_connection().expect("the test cluster is reachable"))
    } else {
        Box::new(redis::Client::open(url).unwrap().get_connection().expect("the test Redis is reachable"))
    }
}

impl Drop for TestRedis {
    fn drop(&mut self) {
        // Tests may use SCAN; the product never does. On a cluster every node is scanned (a
        // replica refuses the deletes, its master's copy is the one removed).
        let pattern = format!("{}:*", self.keys.prefix());
        for seed in stockguard_core::redis_link::seeds(&self.url) {
            let Ok(mut conn) = redis::Client::open(seed).and_then(|c| c.get_connection()) else { continue };
            let keys: Vec<String> = redis::cmd("SCAN")
                .cursor_arg(0)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(10_000)
                .clone()
                .iter(&mut conn)
                .map(|it| it.collect())
                .unwrap_or_default();
            // One key per command: a cluster node refuses a DEL across slots.
            let mut pipe = redis::pipe();
            for key in &keys {
                pipe.del(key).ignore();
            }
            if !keys.is_empty() {
                let _: redis::RedisResult<()> = pipe.query(&mut conn);
            }
        }
    }
}

/// One integer from a query (a count, a sum).
pub async fn scalar(pool: &MySqlPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

/// The URL of the database `#[sqlx::test]` made for this test.
pub async fn mysql_url_of(pool: &MySqlPool) -> String {
    let (db,): (String,) = sqlx::query_as("SELECT DATABASE()").fetch_one(pool).await.unwrap();
    let base = std::env::var("DATABASE_URL").expect("DATABASE_URL is set (see .cargo/config.toml)");
    let mut url = url::Url::parse(&base).expect("DATABASE_URL is a URL");
    url.set_path(&format!("/{db}"));
    url.to_string()
}

/// Connections to this test's database and to the Redis at `redis_url` (a private server of
/// the test's own), with a unique key prefix.
pub async fn connections_to(pool: &MySqlPool, redis_url: &str, tag: &str) -> Connections {
    let settings = ConnectionSettings::from_urls(
        EnvironmentKind::Sandbox,
        &mysql_url_of(pool).await,
        redis_url,
        &unique_prefix(tag),
    );
    Connections::open(settings).await.expect("test servers are reachable")
}

/// Connections to this test's database and key prefix, labelled as the given environment.
pub async fn connections(pool: &MySqlPool, redis: &TestRedis, environment: EnvironmentKind) -> Connections {
    let settings =
        ConnectionSettings::from_urls(environment, &mysql_url_of(pool).await, &redis.url, redis.keys.prefix());
    Connections::open(settings).await.expect("test servers are reachable")
}

/// A free loopback port, for a server a test starts. Free when this returns; the server is
/// started right after, so the window for another process to take it is small.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("the OS hands out a loopback port");
    listener.local_addr().expect("a bound socket has an address").port()
}

/// A binary on PATH, in the sbin folders (where Debian puts `mariadbd`), or among cargo's
/// installed binaries (`tauri-driver`). Not the engine's `find_binary`: the desktop crate's
/// test compiles this module and does not link the engine.
pub fn which(name: &str) -> Option<std::path::PathBuf> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| std::path::Path::new(&home).join(".cargo")));
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(std::path::PathBuf::from))
        .chain(cargo_home.map(|home| home.join("bin")))
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}
