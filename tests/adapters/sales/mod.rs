//! Other teams' flash sales, built small and real for the adapter tests (issue 28).
//!
//! Each file is one public sale shape: its own DDL, its own Redis keys and queue, its own order
//! path (`Buy::buy`, the shape's front half) and, where it has one, its own consumer (the back
//! half), plus the faults the issue names. No Stockguard code runs inside them: they are the
//! systems Stockguard is pointed at through an adapter file (`adapter_toml()`).
//!
//! This module holds what they share: a fresh MariaDB database per sale, the sale's Redis and
//! RabbitMQ connections, and the errors of their steps. `traffic` runs concurrent buyers,
//! `control` pauses and stops a consumer.

#![allow(dead_code)]

pub mod buckets;
pub mod control;
pub mod course_stream;
pub mod fastapi_rabbit;
pub mod go_counters;
pub mod mall_lock;
pub mod miaosha_negative;
pub mod node_bullmq;
pub mod request_table;
pub mod sku_stream;
pub mod traffic;

pub use traffic::{Answer, Buy, Tally, Traffic};

use std::sync::atomic::{AtomicBool, Ordering};

use sqlx::mysql::{MySqlConnectOptions, MySqlPoolOptions};
use sqlx::{ConnectOptions, Executor, MySqlPool};

/// A step of a sale that failed, with its cause.
#[derive(Debug, thiserror::Error)]
pub enum SaleError {
    #[error("{step}: {source}")]
    Db {
        step: &'static str,
        #[source]
        source: sqlx::Error,
    },
    #[error("{step}: {source}")]
    Redis {
        step: &'static str,
        #[source]
        source: redis::RedisError,
    },
    #[error("{step}: {source}")]
    Amqp {
        step: &'static str,
        #[source]
        source: lapin::Error,
    },
    #[error("{step}: {source}")]
    Message {
        step: &'static str,
        #[source]
        source: serde_json::Error,
    },
}

/// `.map_err(db("step"))`: a database error of the named step.
pub fn db(step: &'static str) -> impl FnOnce(sqlx::Error) -> SaleError {
    move |source| SaleError::Db { step, source }
}

/// `.map_err(rd("step"))`: a Redis error of the named step.
pub fn rd(step: &'static str) -> impl FnOnce(redis::RedisError) -> SaleError {
    move |source| SaleError::Redis { step, source }
}

/// `.map_err(mq("step"))`: a RabbitMQ error of the named step.
pub fn mq(step: &'static str) -> impl FnOnce(lapin::Error) -> SaleError {
    move |source| SaleError::Amqp { step, source }
}

/// True when the error is InnoDB choosing this transaction as a deadlock victim (1213) or a
/// lock wait running out (1205): the statement is worth trying again.
pub fn is_retryable(error: &SaleError) -> bool {
    match error {
        SaleError::Db { source: sqlx::Error::Database(e), .. } => {
            matches!(e.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>().map(|e| e.number()), Some(1213 | 1205))
        }
        _ => false,
    }
}

/// The server the sales' databases are created on: `STOCKGUARD_TEST_MYSQL_ADMIN` (a user that
/// may create databases), by default the machine's root.
pub fn mysql_admin_url() -> String {
    std::env::var("STOCKGUARD_TEST_MYSQL_ADMIN").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306".to_string())
}

/// The RabbitMQ of the tests: `STOCKGUARD_TEST_AMQP_URL`, by default the machine's.
pub fn amqp_url() -> String {
    std::env::var("STOCKGUARD_TEST_AMQP_URL").unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".to_string())
}

/// The RabbitMQ management HTTP API of the tests' RabbitMQ (the messages its consumers hold
/// unacknowledged are seen only there): `STOCKGUARD_TEST_RABBIT_MANAGEMENT_URL`, by default the
/// machine's (`make test` enables the plugin).
pub fn management_url() -> String {
    std::env::var("STOCKGUARD_TEST_RABBIT_MANAGEMENT_URL")
        .unwrap_or_else(|_| "http://guest:guest@127.0.0.1:15672".to_string())
}

/// The server's error number when the error is one of MariaDB's (1213: chosen as a deadlock's
/// victim; 1205: a lock wait ran out).
pub fn db_error_number(error: &SaleError) -> Option<u16> {
    match error {
        SaleError::Db { source: sqlx::Error::Database(e), .. } => {
            e.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>().map(|e| e.number())
        }
        _ => None,
    }
}

/// A key prefix, database name and queue names no other sale (or run) uses.
pub fn sale_prefix(tag: &str) -> String {
    crate::support::unique_prefix(tag)
}

/// A database of the sale's own, created fresh with the sale's DDL.
pub struct SaleDb {
    pub name: String,
    /// The sale's database URL, as its adapter file names it (the admin user).
    pub url: String,
    pub pool: MySqlPool,
}

impl SaleDb {
    /// Creates the database `sale_<prefix>` and runs `ddl` in it, one statement each.
    pub async fn create(prefix: &str, ddl: &[&str]) -> Self {
        let admin_url = mysql_admin_url();
        let name = database_name(prefix);
        let admin = admin_pool(&admin_url, 1).await;
        admin.execute(format!("CREATE DATABASE `{name}`").as_str()).await.expect("the sale's database is created");
        admin.close().await;
        let url = url_with(&admin_url, None, &name);
        let pool = admin_pool(&url, 8).await;
        for statement in ddl {
            pool.execute(*statement).await.unwrap_or_else(|e| panic!("the sale's DDL runs ({statement}): {e}"));
        }
        Self { name, url, pool }
    }

    /// The URL of an account that may only SELECT in the sale's database (created on the first
    /// call, dropped with the sale), as a team would hand Stockguard.
    pub async fn select_only_url(&self) -> String {
        let user = select_only_user(&self.name);
        let password = format!("pw{}", self.name.len());
        for statement in [
            format!("CREATE USER IF NOT EXISTS '{user}'@'%' IDENTIFIED BY '{password}'"),
            format!("GRANT SELECT ON `{}`.* TO '{user}'@'%'", self.name),
        ] {
            self.pool.execute(statement.as_str()).await.expect("the SELECT-only account is made");
        }
        url_with(&mysql_admin_url(), Some((&user, &password)), &self.name)
    }

    /// The sale's tables, by name (to show a command created, altered or dropped none).
    pub async fn tables(&self) -> Vec<String> {
        sqlx::query_scalar(
            "SELECT CAST(TABLE_NAME AS CHAR) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME",
        )
        .bind(&self.name)
        .fetch_all(&self.pool)
        .await
        .expect("information_schema answers")
    }

    /// One integer from a query.
    pub async fn scalar(&self, sql: &str, product: i64) -> i64 {
        sqlx::query_scalar::<_, i64>(sql)
            .bind(product)
            .fetch_one(&self.pool)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }
}

fn database_name(prefix: &str) -> String {
    format!("sale_{prefix}")
}

fn select_only_user(database: &str) -> String {
    format!("ro_{database}")
}

/// `base` (a server URL) with the user replaced when given and the database path set.
fn url_with(base: &str, user: Option<(&str, &str)>, database: &str) -> String {
    let mut url = url::Url::parse(base).expect("STOCKGUARD_TEST_MYSQL_ADMIN is a URL");
    if let Some((user, password)) = user {
        url.set_username(user).expect("a MySQL URL takes a user");
        url.set_password(Some(password)).expect("a MySQL URL takes a password");
    }
    url.set_path(&format!("/{database}"));
    url.to_string()
}

/// What a sale leaves on the servers: its keys, its database (and SELECT-only account) and its
/// queue. `remove()` is the sale's cleanup; when a failed test drops the sale without it, the
/// drop removes them on a thread of its own.
pub struct Leftovers {
    prefix: String,
    database: bool,
    queue: Option<String>,
    removed: AtomicBool,
}

impl Leftovers {
    pub fn new(prefix: &str, database: bool, queue: Option<&str>) -> Self {
        Self { prefix: prefix.to_string(), database, queue: queue.map(str::to_string), removed: AtomicBool::new(false) }
    }

    /// Deletes the keys, the queue, the database and its account.
    pub async fn remove(&self) {
        self.removed.store(true, Ordering::SeqCst);
        remove_leftovers(&self.prefix, self.database, self.queue.as_deref()).await;
    }
}

impl Drop for Leftovers {
    fn drop(&mut self) {
        if self.removed.load(Ordering::SeqCst) {
            return;
        }
        let (prefix, database, queue) = (self.prefix.clone(), self.database, self.queue.clone());
        // The test's runtime may be gone or busy: a runtime of its own, on a thread of its own.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime starts");
            runtime.block_on(remove_leftovers(&prefix, database, queue.as_deref()));
        })
        .join();
    }
}

async fn remove_leftovers(prefix: &str, database: bool, queue: Option<&str>) {
    delete_keys(prefix).await;
    if let Some(queue) = queue {
        let amqp = amqp_connection().await;
        let channel = amqp.create_channel().await.expect("a RabbitMQ channel opens");
        channel
            .queue_delete(queue.into(), lapin::options::QueueDeleteOptions::default())
            .await
            .expect("the sale's queue is deleted");
        let _ = amqp.close(200, "sale over".into()).await;
    }
    if database {
        let name = database_name(prefix);
        let admin = admin_pool(&mysql_admin_url(), 1).await;
        // A connection still on the sale's database with a transaction open holds a metadata
        // lock, and the DROP waited on it without end (MariaDB's lock wait is a year): a
        // fresh-clone run here hung 80 minutes; which handle left it open is not known. The
        // sale is over: its connections are ended, and a lock still held fails the DROP
        // within a minute instead of hanging the run.
        let stragglers: Vec<u64> =
            sqlx::query_scalar("SELECT CAST(id AS UNSIGNED) FROM information_schema.PROCESSLIST WHERE db = ?")
                .bind(&name)
                .fetch_all(&admin)
                .await
                .expect("the sale's connections are listed");
        for id in stragglers {
            let _ = admin.execute(format!("KILL CONNECTION {id}").as_str()).await;
        }
        admin.execute("SET SESSION lock_wait_timeout = 60").await.expect("the DROP's lock wait is bounded");
        for statement in [
            format!("DROP DATABASE IF EXISTS `{name}`"),
            format!("DROP USER IF EXISTS '{}'@'%'", select_only_user(&name)),
        ] {
            admin.execute(statement.as_str()).await.expect("the sale's database and account are dropped");
        }
        admin.close().await;
    }
}

async fn admin_pool(url: &str, max: u32) -> MySqlPool {
    let options: MySqlConnectOptions = url.parse().expect("a MySQL URL");
    MySqlPoolOptions::new()
        .max_connections(max)
        .connect_with(options.disable_statement_logging())
        .await
        .unwrap_or_else(|e| panic!("MariaDB is not reachable at {url}: {e}. Start it (`make test` does)"))
}

/// Waits until `orders` (a product's orders written by the sale's consumer) adds up to `n`
/// over `products`, a minute at most.
pub async fn rows_written<F, Fut>(orders: F, products: &[i64], n: i64)
where
    F: Fn(i64) -> Fut,
    Fut: std::future::Future<Output = i64>,
{
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let mut written = 0;
        for &p in products {
            written += orders(p).await;
        }
        if written >= n {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "the sale's consumer wrote {written} of {n} orders");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// A connection to the tests' Redis (one server).
pub async fn redis_conn() -> redis::aio::MultiplexedConnection {
    let url = crate::support::redis_url();
    let client = redis::Client::open(url.as_str()).expect("the test Redis URL is valid");
    client
        .get_multiplexed_async_connection()
        .await
        .unwrap_or_else(|e| panic!("Redis is not reachable at {url}: {e}. Start it (`make test` does)"))
}

/// An integer Redis value, or None when the key does not exist.
pub async fn redis_int(conn: &mut redis::aio::MultiplexedConnection, key: &str) -> Option<i64> {
    redis::cmd("GET").arg(key).query_async(conn).await.expect("Redis answers GET")
}

/// Deletes every key under `prefix:`.
pub async fn delete_keys(prefix: &str) {
    let mut conn = redis_conn().await;
    let mut keys: Vec<String> = Vec::new();
    let mut cursor = 0u64;
    loop {
        let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(format!("{prefix}:*"))
            .arg("COUNT")
            .arg(1000)
            .query_async(&mut conn)
            .await
            .expect("Redis answers SCAN");
        keys.extend(batch);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    if !keys.is_empty() {
        let _: () = redis::cmd("DEL").arg(&keys).query_async(&mut conn).await.expect("Redis deletes the sale's keys");
    }
}

/// A connection to the tests' RabbitMQ, over tokio.
pub async fn amqp_connection() -> lapin::Connection {
    let url = amqp_url();
    lapin::Connection::connect(&url, lapin::ConnectionProperties::default()).await.unwrap_or_else(|e| {
        panic!("RabbitMQ is not reachable at {url}: {e}. Start it (`make test` does: rabbitmq-server -detached)")
    })
}
