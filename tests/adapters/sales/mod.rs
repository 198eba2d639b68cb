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
pub mod traffic;

pub use traffic::{Answer, Buy, Tally, Traffic};

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

/// A key prefix, database name and queue names no other sale (or run) uses.
pub fn sale_prefix(tag: &str) -> String {
    crate::support::unique_prefix(tag)
}

/// A database of the sale's own, created fresh with the sale's DDL.
pub struct SaleDb {
    pub name: String,
    /// The sale's database URL, as its adapter file names it.
    pub url: String,
    pub pool: MySqlPool,
}

impl SaleDb {
    /// Creates the database `sale_<prefix>` and runs `ddl` in it, one statement each.
    pub async fn create(prefix: &str, ddl: &[&str]) -> Self {
        let admin_url = mysql_admin_url();
        let name = format!("sale_{prefix}");
        let admin = admin_pool(&admin_url, 1).await;
        admin.execute(format!("CREATE DATABASE `{name}`").as_str()).await.expect("the sale's database is created");
        admin.close().await;
        let mut url = url::Url::parse(&admin_url).expect("STOCKGUARD_TEST_MYSQL_ADMIN is a URL");
        url.set_path(&format!("/{name}"));
        let url = url.to_string();
        let pool = admin_pool(&url, 16).await;
        for statement in ddl {
            pool.execute(*statement).await.unwrap_or_else(|e| panic!("the sale's DDL runs ({statement}): {e}"));
        }
        Self { name, url, pool }
    }

    /// Drops the sale's database.
    pub async fn drop_database(&self) {
        self.pool.close().await;
        let admin = admin_pool(&mysql_admin_url(), 1).await;
        admin
            .execute(format!("DROP DATABASE IF EXISTS `{}`", self.name).as_str())
            .await
            .expect("the sale's database is dropped");
        admin.close().await;
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

async fn admin_pool(url: &str, max: u32) -> MySqlPool {
    let options: MySqlConnectOptions = url.parse().expect("a MySQL URL");
    MySqlPoolOptions::new()
        .max_connections(max)
        .connect_with(options.disable_statement_logging())
        .await
        .unwrap_or_else(|e| panic!("MariaDB is not reachable at {url}: {e}. Start it (`make test` does)"))
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
