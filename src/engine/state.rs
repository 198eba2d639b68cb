//! What every request handler of one engine instance shares.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use sqlx::MySqlPool;
use tokio::sync::RwLock;

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
    products: Arc<RwLock<HashMap<u64, ProductRule>>>,
}

impl EngineState {
    pub fn new(pool: MySqlPool, redis: redis::aio::ConnectionManager, keys: Keys, config: EngineConfig) -> Self {
        Self {
            pool,
            redis,
            keys,
            reserver: Arc::new(Reserver::new()),
            config,
            products: Arc::default(),
        }
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
