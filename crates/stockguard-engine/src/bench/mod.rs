//! Benchmarks (`stockguard bench ...`): each measures side by side in one run, so that the
//! ratios hold on a noisy machine. They write only to a bench product of their own (a random
//! id above 9,000,000,000) and their own Redis keys, clean up after themselves, and refuse a
//! production profile.
//!
//! - [`reserve`]: the reserve script through our Rust client against `redis-benchmark`
//!   EVALSHA of the same script on the same server (the ceiling).
//! - [`engine`]: accepted orders/s and latency of one engine through HTTP against that
//!   ceiling, and persisted orders/s with batched against single-order transactions.
//! - [`vouching`]: part of `engine`: accepted orders/s and p99 with vouching off, on with a
//!   healthy replica, and on with the replica stalled, on a private replicated Redis.
//! - `engine_process` (private): the engine in its own process that `engine`, `vouching` and
//!   `cluster` drive through HTTP, started on a free port and stopped with SIGINT.
//! - [`recon`]: the ledger query over millions of orders with and without the covering
//!   index, the chunked check, one drift reading of 1,000 products.
//! - [`exit`]: how long the guided exit from DB mode pauses sales at 20, 1,000 and 5,000
//!   products, the per-product rebuild against the batched one.
//! - [`deduct`]: four ways to deduct one hot product in the DB (conditional update, `FOR
//!   UPDATE`, optimistic version, naive read-then-write) at 8, 32 and 128 connections.
//!
//! - [`cluster`]: Redis Cluster beside one server in one run: the reserve script on one hot
//!   product and spread over twelve, one engine on each, three engines on the cluster.
//! - [`adapter`]: an exact reading of a course-shaped sale over its adapter file (a Redis
//!   stream in flight) beside our own exact reading of a native sale of the same size.
//!
//! `recon`, `exit`, `deduct` and `adapter` work in a [`ScratchDatabase`] of their own beside the profile's.

pub mod adapter;
pub mod cluster;
pub mod deduct;
pub mod engine;
mod engine_process;
pub mod exit;
pub mod recon;
pub mod reserve;
pub mod vouching;

use secrecy::ExposeSecret as _;
use serde::Serialize;
use sqlx::{Connection as _, MySqlPool};

use stockguard_core::connect::{self, Connections};
use stockguard_core::profile::{ConnectionSettings, EnvironmentKind};

/// Requests outstanding at once in `bench engine`, the same for the ceiling (`redis-benchmark
/// -c`) and for the engine (the load generator's connections): the two figures are compared
/// side by side. The vouching runs use it too unless told otherwise.
const CLIENTS: u32 = 50;

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("benchmarks write bench data; they refuse a production profile")]
    Production,
    #[error("`redis-benchmark` failed: {0} (install redis-tools)")]
    RedisBenchmark(String),
    #[error(
        "the Redis URL holds a password, and `redis-benchmark` takes one only on its command line (`-a`), where \
         any user of this machine can read it (`ps`); it ignores REDISCLI_AUTH. Run `bench reserve` against a Redis \
         without a password (the sandbox's)"
    )]
    PasswordOnCommandLine,
    #[error("the engine under test failed: {0}")]
    Engine(String),
    #[error("DB: {0}")]
    Db(#[from] sqlx::Error),
    #[error("Redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error(transparent)]
    Load(#[from] crate::load::LoadError),
    #[error(transparent)]
    Persist(#[from] crate::engine::persist::PersistError),
    #[error(transparent)]
    Recon(#[from] stockguard_core::recon::ReconError),
    #[error("the reading over the adapter: {0}")]
    Adapter(#[from] stockguard_core::adapter::AdapterError),
    /// A reading of a sale whose every figure the bench knows said something else.
    #[error("the {reading} reading is wrong: {detail}")]
    WrongReading { reading: &'static str, detail: String },
}

/// One measured figure.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    pub name: String,
    pub value: f64,
    pub unit: String,
}

impl Figure {
    pub fn new(name: &str, value: f64, unit: &str) -> Self {
        Self { name: name.into(), value, unit: unit.into() }
    }
}

/// A benchmark's figures and the ratios that matter.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    pub bench: String,
    pub figures: Vec<Figure>,
    pub ratios: Vec<Figure>,
    pub notes: Vec<String>,
}

/// What a benchmark hands its front end: text for people; the value itself serializes to JSON.
pub trait Report: Serialize {
    fn to_text(&self) -> String;
}

impl Report for BenchReport {
    fn to_text(&self) -> String {
        let mut out = format!("bench {}\n", self.bench);
        for f in &self.figures {
            out.push_str(&format!("  {:<58} {:>14.2} {}\n", f.name, f.value, f.unit));
        }
        for r in &self.ratios {
            out.push_str(&format!("  ratio {:<52} {:>14.3} {}\n", r.name, r.value, r.unit));
        }
        for n in &self.notes {
            out.push_str(&format!("  note: {n}\n"));
        }
        out
    }
}

/// A database of a benchmark's own on the profile's server, named `sg_bench_<bench>_<hash of
/// the profile's database name>`: apart from the sale's data, apart from another profile's
/// run, and the same name on every run so that a run that crashed is cleaned up by the next.
pub struct ScratchDatabase {
    admin: sqlx::MySqlConnection,
    pub name: String,
    /// The profile's settings, pointing at the scratch database.
    pub settings: ConnectionSettings,
}

impl ScratchDatabase {
    /// Creates it afresh (dropping a leftover first); refuses a production profile.
    pub async fn create(settings: &ConnectionSettings, bench: &str) -> Result<Self, BenchError> {
        if settings.environment == EnvironmentKind::Production {
            return Err(BenchError::Production);
        }
        let mut url =
            url::Url::parse(settings.mysql_url.expose_secret()).map_err(|e| BenchError::Engine(e.to_string()))?;
        // A hash, not the name itself: a database name may have 64 characters at most.
        let source = url.path().trim_start_matches('/');
        let hash =
            source.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        let name = format!("sg_bench_{bench}_{hash:016x}");
        url.set_path(&format!("/{name}"));
        let options = connect::mysql_options_with(settings.mysql_url.expose_secret(), &settings.tls.mysql)
            .map_err(|e| BenchError::Engine(e.to_string()))?;
        let mut admin = sqlx::MySqlConnection::connect_with(&options).await?;
        sqlx::query(&format!("DROP DATABASE IF EXISTS `{name}`")).execute(&mut admin).await?;
        sqlx::query(&format!("CREATE DATABASE `{name}`")).execute(&mut admin).await?;
        let settings = ConnectionSettings { mysql_url: url.to_string().into(), ..settings.clone() };
        Ok(Self { admin, name, settings })
    }

    /// A pool on it, with the project's migrations applied.
    pub async fn migrated_pool(&self) -> Result<sqlx::MySqlPool, BenchError> {
        let pool = connect::connect_mysql(&self.settings).await.map_err(|e| BenchError::Engine(e.to_string()))?;
        connect::migrate(&pool, "bench").await.map_err(|e| BenchError::Engine(e.to_string()))?;
        Ok(pool)
    }

    /// Drops it whatever became of the measurement `result`; returns the report (when the
    /// measurement succeeded) with the note that says so.
    pub async fn drop_after<R>(self, result: Result<R, BenchError>) -> Result<(R, String), BenchError> {
        let dropped = self.drop_database().await?;
        Ok((result?, dropped))
    }

    /// Drops it; the note a report carries to say so.
    pub async fn drop_database(mut self) -> Result<String, BenchError> {
        sqlx::query(&format!("DROP DATABASE IF EXISTS `{}`", self.name)).execute(&mut self.admin).await?;
        Ok(format!("scratch database: {} (dropped)", self.name))
    }
}

/// A product of the benchmark's own, with `stock` units in the DB and in Redis.
pub struct BenchProduct {
    pub id: u64,
}

impl BenchProduct {
    pub async fn create(conns: &Connections, stock: i64, per_user_limit: i64) -> Result<Self, BenchError> {
        if conns.settings.environment == EnvironmentKind::Production {
            return Err(BenchError::Production);
        }
        let id = 9_000_000_000 + u64::from(rand::random::<u32>());
        sqlx::query("INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit) VALUES (?, 'bench product', ?, ?, ?)")
            .bind(id)
            .bind(stock)
            .bind(stock)
            .bind(per_user_limit)
            .execute(&conns.mysql)
            .await?;
        let mut r = conns.redis.clone();
        let _: () = redis::cmd("SET").arg(conns.keys.stock(id)).arg(stock).query_async(&mut r).await?;
        crate::engine::consumer::ensure_group(&mut r, &conns.keys, id).await?;
        Ok(Self { id })
    }

    /// Removes every trace of the bench product.
    pub async fn drop_all(self, conns: &Connections) -> Result<(), BenchError> {
        remove_product(&conns.mysql, self.id).await?;
        self.drop_keys(conns).await
    }

    /// Its Redis keys only; its rows go with a scratch database. `UNLINK` frees a big
    /// stream or hash in the background instead of stalling Redis under the next measurement.
    pub async fn drop_keys(self, conns: &Connections) -> Result<(), BenchError> {
        let mut r = conns.redis.clone();
        let _: () = redis::cmd("UNLINK").arg(conns.keys.all_for_product(self.id)).query_async(&mut r).await?;
        Ok(())
    }
}

async fn remove_product(pool: &MySqlPool, id: u64) -> Result<(), sqlx::Error> {
    for table in ["orders", "outbox", "order_failures", "inventory"] {
        sqlx::query(&format!("DELETE FROM {table} WHERE product_id = ?")).bind(id).execute(pool).await?;
    }
    Ok(())
}
