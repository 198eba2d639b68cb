//! One reading of many products: Redis first (pipelined), then one DB round trip.
//!
//! Redis is read before the DB so that an order which moves from "in flight" to "in the DB"
//! between the two reads is seen in the DB and recognised there: in-flight entries whose
//! order number already has a row are not counted twice. (Reservations made after the Redis
//! read and committed before the DB read are what the exact-cut work of the reconciliation
//! issue corrects for; until then a reading taken under heavy traffic can show transient
//! REDIS_HIGH.)

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

use super::status::DriftStatus;
use crate::keys::Keys;

/// One product's stock, everywhere it is. JSON field names are stable (documented in
/// `docs/json.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reading {
    pub product_id: u64,
    pub name: String,
    pub initial_stock: i64,
    pub db_stock: i64,
    pub live_orders_qty: i64,
    pub inflight_pending: i64,
    pub pending_release: i64,
    /// `None` when the stock key is absent.
    pub redis_stock: Option<i64>,
    pub expected_redis: i64,
    /// `None` when the stock key is absent.
    pub drift: Option<i64>,
    pub status: DriftStatus,
}

#[derive(Debug, thiserror::Error)]
pub enum ReconError {
    #[error("reading the DB failed: {0}")]
    Db(#[from] sqlx::Error),
    #[error("reading Redis failed: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("unknown product {0}")]
    UnknownProduct(u64),
}

/// The product ids of the sale, in id order.
pub async fn product_ids(pool: &MySqlPool) -> Result<Vec<u64>, ReconError> {
    let ids: Vec<(u64,)> = sqlx::query_as("SELECT product_id FROM inventory ORDER BY product_id")
        .fetch_all(pool)
        .await?;
    Ok(ids.into_iter().map(|(id,)| id).collect())
}

struct RedisSide {
    stock: Option<i64>,
    inflight: HashMap<String, i64>,
}

/// Reads the given products (all of the sale's when `only` is empty), most severe first.
pub async fn read_products<C>(pool: &MySqlPool, redis: &mut C, keys: &Keys, only: &[u64]) -> Result<Vec<Reading>, ReconError>
where
    C: redis::aio::ConnectionLike + Send,
{
    let ids = if only.is_empty() { product_ids(pool).await? } else { only.to_vec() };
    if ids.is_empty() {
        return Ok(Vec::new());
    }

    let mut pipe = redis::pipe();
    for &id in &ids {
        pipe.get(keys.stock(id)).hgetall(keys.inflight(id));
    }
    let raw: Vec<(Option<i64>, HashMap<String, i64>)> = {
        let flat: Vec<redis::Value> = pipe.query_async(redis).await?;
        flat.chunks(2)
            .map(|pair| {
                let stock: Option<i64> = redis::from_redis_value(&pair[0])?;
                let inflight: HashMap<String, i64> = redis::from_redis_value(&pair[1])?;
                Ok((stock, inflight))
            })
            .collect::<Result<_, redis::RedisError>>()?
    };
    let redis_side: HashMap<u64, RedisSide> = ids
        .iter()
        .copied()
        .zip(raw.into_iter().map(|(stock, inflight)| RedisSide { stock, inflight }))
        .collect();

    let id_list = ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    // The ids are integers we formatted ourselves, so inlining them is safe; it keeps the
    // statement one round trip for any number of products.
    let sql = format!(
        "SELECT i.product_id, i.name, i.initial_stock, i.stock, \
                CAST(COALESCE(o.live, 0) AS SIGNED), CAST(COALESCE(r.pending, 0) AS SIGNED) \
         FROM inventory i \
         LEFT JOIN (SELECT product_id, SUM(buy_count) AS live FROM orders FORCE INDEX (idx_orders_recon) \
                    WHERE status IN ('WAIT_PAY','PAID') AND product_id IN ({id_list}) GROUP BY product_id) o \
                ON o.product_id = i.product_id \
         LEFT JOIN (SELECT product_id, SUM(qty) AS pending FROM outbox \
                    WHERE status = 'PENDING' AND product_id IN ({id_list}) GROUP BY product_id) r \
                ON r.product_id = i.product_id \
         WHERE i.product_id IN ({id_list})"
    );
    let rows: Vec<(u64, String, i32, i32, i64, i64)> = sqlx::query_as(&sql).fetch_all(pool).await?;

    let inflight_nos: Vec<&str> = redis_side.values().flat_map(|r| r.inflight.keys().map(String::as_str)).collect();
    let in_db = orders_present(pool, &inflight_nos).await?;

    let mut readings = Vec::with_capacity(rows.len());
    for (product_id, name, initial, stock, live, pending) in rows {
        let side = &redis_side[&product_id];
        let inflight_pending: i64 = side
            .inflight
            .iter()
            .filter(|(no, _)| !in_db.contains(no.as_str()))
            .map(|(_, qty)| *qty)
            .sum();
        let (initial, stock) = (i64::from(initial), i64::from(stock));
        let expected_redis = stock - inflight_pending - pending;
        let status = DriftStatus::classify(initial, stock, live, side.stock, expected_redis);
        readings.push(Reading {
            product_id,
            name,
            initial_stock: initial,
            db_stock: stock,
            live_orders_qty: live,
            inflight_pending,
            pending_release: pending,
            redis_stock: side.stock,
            expected_redis,
            drift: side.stock.map(|r| r - expected_redis),
            status,
        });
    }
    if let Some(&missing) = ids.iter().find(|id| !readings.iter().any(|r| r.product_id == **id)) {
        return Err(ReconError::UnknownProduct(missing));
    }
    readings.sort_by(|a, b| {
        b.status
            .severity()
            .cmp(&a.status.severity())
            .then(b.drift.unwrap_or(0).abs().cmp(&a.drift.unwrap_or(0).abs()))
            .then(a.product_id.cmp(&b.product_id))
    });
    Ok(readings)
}

/// Which of these order numbers already have a row in `orders`.
async fn orders_present(pool: &MySqlPool, order_nos: &[&str]) -> Result<HashSet<String>, ReconError> {
    let mut present = HashSet::new();
    for chunk in order_nos.chunks(1000) {
        let placeholders = vec!["?"; chunk.len()].join(",");
        let sql = format!("SELECT order_no FROM orders WHERE order_no IN ({placeholders})");
        let mut query = sqlx::query_as::<_, (String,)>(&sql);
        for no in chunk {
            query = query.bind(*no);
        }
        present.extend(query.fetch_all(pool).await?.into_iter().map(|(no,)| no));
    }
    Ok(present)
}
