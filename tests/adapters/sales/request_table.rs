//! A sale whose accepted orders wait in a table of its own: a Java sale that takes the unit in
//! Redis (`sk:stock:<id>`), then writes a request row (`sk_request`, state `NEW`) that a worker
//! turns into the order (`sk_order`, state 0 unpaid, 1 paid, 2 closed) and the DB decrement
//! (`sk_goods.stock`; the initial stock in `sk_goods.initial_stock`), marking the request
//! `DONE`, in one transaction.
//!
//! Faults: a unit taken in Redis whose request was never written (REDIS_LOW 1), and an order
//! written whose request was not marked done (a worker of an older version that marks in a
//! second transaction and died between them).

use std::time::Duration;

use sqlx::MySqlPool;

use super::control::{ConsumerHandle, ConsumerSignals};
use super::{db, rd, redis_conn, sale_prefix, Answer, Buy, Leftovers, SaleDb, SaleError};

const DDL: &[&str] = &[
    "CREATE TABLE sk_goods (
        id BIGINT PRIMARY KEY,
        initial_stock INT NOT NULL,
        stock INT NOT NULL
    ) ENGINE=InnoDB",
    "CREATE TABLE sk_order (
        order_sn VARCHAR(32) PRIMARY KEY,
        goods_id BIGINT NOT NULL,
        user_id BIGINT NOT NULL,
        state TINYINT NOT NULL DEFAULT 0,
        KEY idx_goods (goods_id)
    ) ENGINE=InnoDB",
    "CREATE TABLE sk_request (
        id BIGINT AUTO_INCREMENT PRIMARY KEY,
        order_sn VARCHAR(32) NOT NULL UNIQUE,
        goods_id BIGINT NOT NULL,
        user_id BIGINT NOT NULL,
        state VARCHAR(8) NOT NULL DEFAULT 'NEW',
        KEY idx_state (state, id)
    ) ENGINE=InnoDB",
];

/// Their Lua: 1 taken, 0 sold out.
const TAKE: &str = r"
local stock = tonumber(redis.call('GET', KEYS[1]))
if stock == nil or stock <= 0 then
  return 0
end
redis.call('DECR', KEYS[1])
return 1";

/// How long their worker waits when it finds no request (its polling interval).
const POLL: Duration = Duration::from_millis(20);

/// The request-table sale, running (its worker started).
pub struct RequestTableSale {
    pub prefix: String,
    pub db: SaleDb,
    redis: redis::aio::MultiplexedConnection,
    worker: ConsumerHandle,
    leftovers: Leftovers,
}

impl RequestTableSale {
    /// Creates the sale with `goods` as `(id, stock)` in the DB and Redis, and starts the worker.
    pub async fn start(goods: &[(i64, i64)]) -> Self {
        let prefix = sale_prefix("rt");
        let leftovers = Leftovers::new(&prefix, true, None);
        let db = SaleDb::create(&prefix, DDL).await;
        let mut redis = redis_conn().await;
        for &(id, stock) in goods {
            sqlx::query("INSERT INTO sk_goods (id, initial_stock, stock) VALUES (?, ?, ?)")
                .bind(id)
                .bind(stock)
                .bind(stock)
                .execute(&db.pool)
                .await
                .expect("the goods are seeded");
            let _: () = redis::cmd("SET").arg(stock_key(&prefix, id)).arg(stock).query_async(&mut redis).await.unwrap();
        }
        let pool = db.pool.clone();
        let worker = ConsumerHandle::spawn(move |signals| work(pool, signals));
        Self { prefix, db, redis, worker, leftovers }
    }

    /// The adapter file a user would write for this sale.
    pub fn adapter_toml(&self) -> String {
        format!(
            r#"[sale]
name = "request-table-{prefix}"

[stock]
table = "sk_goods"
product = "id"
remaining = "stock"
initial = "column:initial_stock"

[orders]
table = "sk_order"
product = "goods_id"
quantity = 1
status = "state"
live = [0, 1]
released = [2]
order_id = "order_sn"
user = "user_id"

[redis]
stock = "{prefix}:sk:stock:${{id}}"

[inflight]
source = "table"
table = "sk_request"
product_column = "goods_id"
order_id_column = "order_sn"
pending = {{ column = "state", values = ["NEW"] }}

[repair]
rewrite = "delta"
"#,
            prefix = self.prefix,
        )
    }

    /// Redis took a unit and the request row was never written (REDIS_LOW 1).
    pub async fn lose_one_after_redis(&self, goods: i64) {
        let taken: i64 =
            redis::cmd("DECR").arg(stock_key(&self.prefix, goods)).query_async(&mut self.redis.clone()).await.unwrap();
        assert!(taken >= 0, "a unit was left to lose");
    }

    /// The oldest pending request becomes its order (and the DB decrement) while the request
    /// stays `NEW`: the worker died before marking it. Call it with the worker paused.
    pub async fn crash_before_marking(&self) {
        let (sn, goods, user): (String, i64, i64) = sqlx::query_as(
            "SELECT order_sn, goods_id, user_id FROM sk_request WHERE state = 'NEW' ORDER BY id LIMIT 1",
        )
        .fetch_one(&self.db.pool)
        .await
        .expect("a request was pending");
        let mut tx = self.db.pool.begin().await.unwrap();
        write_order(&mut tx, &sn, goods, user).await.expect("the order is written");
        tx.commit().await.unwrap();
    }

    /// Stops the worker between requests; requests written from now on wait.
    pub async fn pause_worker(&self) {
        self.worker.pause().await;
    }

    /// Starts working again.
    pub async fn resume_worker(&self) {
        self.worker.resume().await;
    }

    /// Requests still `NEW`.
    pub async fn pending(&self) -> i64 {
        sqlx::query_scalar("SELECT COUNT(*) FROM sk_request WHERE state = 'NEW'")
            .fetch_one(&self.db.pool)
            .await
            .expect("the requests count")
    }

    /// Live orders of a product.
    pub async fn orders(&self, goods: i64) -> i64 {
        self.db.scalar("SELECT COUNT(*) FROM sk_order WHERE goods_id = ? AND state IN (0, 1)", goods).await
    }

    /// Stops the worker, deletes the keys and the database.
    pub async fn cleanup(&self) {
        self.worker.stop().await;
        self.db.pool.close().await;
        self.leftovers.remove().await;
    }
}

impl Buy for RequestTableSale {
    async fn buy(&self, user: i64, goods: i64) -> Result<Answer, SaleError> {
        let taken: i64 = redis::Script::new(TAKE)
            .key(stock_key(&self.prefix, goods))
            .invoke_async(&mut self.redis.clone())
            .await
            .map_err(rd("take the unit"))?;
        if taken == 0 {
            return Ok(Answer::SoldOut);
        }
        sqlx::query("INSERT INTO sk_request (order_sn, goods_id, user_id) VALUES (?, ?, ?)")
            .bind(format!("SK{user}-{goods}"))
            .bind(goods)
            .bind(user)
            .execute(&self.db.pool)
            .await
            .map_err(db("write the request"))?;
        Ok(Answer::Accepted)
    }
}

fn stock_key(prefix: &str, goods: i64) -> String {
    format!("{prefix}:sk:stock:{goods}")
}

/// Their worker: the oldest pending requests, each made an order and marked done in one
/// transaction; when none is pending it looks again after its polling interval.
async fn work(pool: MySqlPool, mut signals: ConsumerSignals) {
    while signals.go_on().await {
        let handled = loop {
            match handle_some(&pool).await {
                Err(e) if super::is_retryable(&e) => continue,
                done => break done.expect("the requests are handled"),
            }
        };
        if handled == 0 {
            tokio::select! {
                _ = tokio::time::sleep(POLL) => {}
                _ = signals.interrupted() => {}
            }
        }
    }
}

async fn handle_some(pool: &MySqlPool) -> Result<usize, SaleError> {
    let mut tx = pool.begin().await.map_err(db("begin the batch"))?;
    let requests: Vec<(i64, String, i64, i64)> = sqlx::query_as(
        "SELECT id, order_sn, goods_id, user_id FROM sk_request WHERE state = 'NEW' ORDER BY id LIMIT 20 FOR UPDATE",
    )
    .fetch_all(&mut *tx)
    .await
    .map_err(db("take pending requests"))?;
    for (id, sn, goods, user) in &requests {
        write_order(&mut tx, sn, *goods, *user).await?;
        sqlx::query("UPDATE sk_request SET state = 'DONE' WHERE id = ?")
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(db("mark the request done"))?;
    }
    tx.commit().await.map_err(db("commit the batch"))?;
    Ok(requests.len())
}

async fn write_order(
    tx: &mut sqlx::Transaction<'_, sqlx::MySql>,
    sn: &str,
    goods: i64,
    user: i64,
) -> Result<(), SaleError> {
    let inserted = sqlx::query("INSERT IGNORE INTO sk_order (order_sn, goods_id, user_id) VALUES (?, ?, ?)")
        .bind(sn)
        .bind(goods)
        .bind(user)
        .execute(&mut **tx)
        .await
        .map_err(db("insert the order"))?
        .rows_affected();
    if inserted == 1 {
        sqlx::query("UPDATE sk_goods SET stock = stock - 1 WHERE id = ? AND stock > 0")
            .bind(goods)
            .execute(&mut **tx)
            .await
            .map_err(db("take the unit from the goods"))?;
    }
    Ok(())
}
