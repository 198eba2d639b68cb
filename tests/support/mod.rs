//! Test harness: a fresh database per test comes from `#[sqlx::test]` (with the migrations);
//! this module adds a unique Redis key prefix per test on the shared Redis, and turns a
//! missing server into a loud failure that says how to start it. Nothing here skips.

#![allow(dead_code)]

pub mod mariadb_server;
pub mod redis_server;
pub mod waits;

use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::MySqlPool;
use stockguard_core::connect::Connections;
use stockguard_core::keys::Keys;
use stockguard_core::profile::{ConnectionSettings, EnvironmentKind};

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
        let client = redis::Client::open(url.as_str()).expect("valid Redis URL");
        let mut conn = client.get_multiplexed_async_connection().await.unwrap_or_else(|e| {
            panic!(
                "Redis is not reachable at {url}: {e}. Start it (`make test` does), e.g. \
                 `redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no`"
            )
        });
        let _: String = redis::cmd("PING").query_async(&mut conn).await.expect("Redis answers PING");
        Self { url, keys: Keys::new(unique_prefix(tag)) }
    }

    pub async fn conn(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap()
    }
}

impl Drop for TestRedis {
    fn drop(&mut self) {
        // Tests may use SCAN; the product never does.
        let pattern = format!("{}:*", self.keys.prefix());
        if let Ok(mut conn) = redis::Client::open(self.url.as_str()).and_then(|c| c.get_connection()) {
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
            if !keys.is_empty() {
                let _: redis::RedisResult<()> = redis::cmd("DEL").arg(keys).query(&mut conn);
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

/// An engine serving on 127.0.0.1:0 until the returned sender fires: its URL, the stop
/// sender and the task to await.
pub async fn spawn_engine(
    state: stockguard_engine::engine::state::EngineState,
) -> (String, tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let handle = tokio::spawn(async move {
        stockguard_engine::engine::run::serve(listener, state, async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    (url, stop, handle)
}

/// A reserver with an instance tag registered in this test's database, as an engine has.
pub async fn reserver(pool: &MySqlPool) -> stockguard_engine::engine::Reserver {
    let tag = stockguard_engine::engine::order_no::InstanceTag::claim(pool, "test")
        .await
        .expect("the DB registers the instance");
    stockguard_engine::engine::Reserver::new(tag)
}

/// A product on sale: `db_stock` units in the DB and `redis_stock` in Redis (the same, unless
/// a test starts from drift), at most `per_user_limit` per buyer, its stream group created.
pub async fn put_on_sale<C>(
    pool: &MySqlPool,
    redis: &mut C,
    keys: &Keys,
    product_id: u64,
    (db_stock, redis_stock): (i64, i64),
    per_user_limit: i64,
) where
    C: redis::aio::ConnectionLike + Send,
{
    sqlx::query(
        "INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit) VALUES (?, 'on sale', ?, ?, ?)",
    )
    .bind(product_id)
    .bind(db_stock)
    .bind(db_stock)
    .bind(per_user_limit)
    .execute(pool)
    .await
    .unwrap();
    let _: () = redis::cmd("SET").arg(keys.stock(product_id)).arg(redis_stock).query_async(redis).await.unwrap();
    stockguard_engine::engine::consumer::ensure_group(redis, keys, product_id).await.unwrap();
}

/// A product on sale: `stock` units in the DB and in Redis, its stream group created.
pub async fn open_sale(conns: &Connections, product_id: u64, stock: i64, per_user_limit: i64) {
    put_on_sale(&conns.mysql, &mut conns.redis.clone(), &conns.keys, product_id, (stock, stock), per_user_limit).await;
}

/// A free loopback port, for a server a test starts (see `sandbox::process::free_port`).
pub fn free_port() -> u16 {
    stockguard_engine::sandbox::process::free_port().expect("the OS hands out a free loopback port")
}

/// A binary on PATH, in the sbin folders, or among cargo's installed binaries (`tauri-driver`).
pub fn which(name: &str) -> Option<std::path::PathBuf> {
    stockguard_engine::sandbox::process::find_binary(name).or_else(|| {
        let cargo_home = std::env::var_os("CARGO_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| std::path::Path::new(&home).join(".cargo")))?;
        Some(cargo_home.join("bin").join(name)).filter(|path| path.is_file())
    })
}
