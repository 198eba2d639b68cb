//! What every request handler of one engine instance shares.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sqlx::MySqlPool;
use tokio::sync::RwLock;

use super::limits::Limits;
use super::reserve::Reserver;
use crate::keys::Keys;

#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub instance_id: String,
    /// Unpaid orders close this long after they were reserved.
    pub payment_timeout: Duration,
    pub batch_size: usize,
    pub claim_min_idle: Duration,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// How often the timeout closer and the release relay run.
    pub close_interval: Duration,
    /// Requests per second this instance admits (0: no limit).
    pub global_rate: u32,
    /// Requests per second one user may make, across instances (0: no limit).
    pub per_user_rate: u32,
    /// Start in degraded mode (orders straight to the DB).
    pub degraded: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            instance_id: format!("engine-{:04x}", rand::random::<u16>()),
            payment_timeout: Duration::from_secs(15 * 60),
            batch_size: 200,
            claim_min_idle: Duration::from_secs(30),
            max_body_bytes: 4096,
            close_interval: Duration::from_millis(500),
            global_rate: 0,
            per_user_rate: 0,
            degraded: false,
        }
    }
}

/// A product as the order path needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProductRule {
    pub per_user_limit: i64,
}

#[derive(Clone)]
pub struct EngineState {
    pub pool: MySqlPool,
    pub redis: redis::aio::ConnectionManager,
    pub keys: Keys,
    pub reserver: Arc<Reserver>,
    pub config: EngineConfig,
    pub limits: Limits,
    degraded: Arc<AtomicBool>,
    products: Arc<RwLock<HashMap<u64, ProductRule>>>,
}

impl EngineState {
    pub fn new(pool: MySqlPool, redis: redis::aio::ConnectionManager, keys: Keys, config: EngineConfig) -> Self {
        Self {
            pool,
            redis,
            keys,
            reserver: Arc::new(Reserver::new()),
            limits: Limits::new(config.global_rate, config.per_user_rate),
            degraded: Arc::new(AtomicBool::new(config.degraded)),
            config,
            products: Arc::default(),
        }
    }

    /// True when orders go straight to the DB.
    pub fn is_degraded(&self) -> bool {
        self.degraded.load(Ordering::Relaxed)
    }

    pub fn set_degraded(&self, on: bool) {
        self.degraded.store(on, Ordering::Relaxed);
    }

    /// The product ids known to this instance (those requested so far).
    pub async fn known_products(&self) -> Vec<u64> {
        self.products.read().await.keys().copied().collect()
    }

    /// The product's rule, from the cache or (on a miss) the DB. `None`: no such product.
    pub async fn product(&self, product_id: u64) -> Result<Option<ProductRule>, sqlx::Error> {
        if let Some(rule) = self.products.read().await.get(&product_id) {
            return Ok(Some(*rule));
        }
        let limit: Option<i32> = sqlx::query_scalar("SELECT per_user_limit FROM inventory WHERE product_id = ?")
            .bind(product_id)
            .fetch_optional(&self.pool)
            .await?;
        let rule = limit.map(|l| ProductRule { per_user_limit: i64::from(l) });
        if let Some(rule) = rule {
            self.products.write().await.insert(product_id, rule);
        }
        Ok(rule)
    }
}
