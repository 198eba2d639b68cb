//! A sale keyed by text: its products are `VARCHAR` SKUs (`'SKU-A'`, `'SKU-10'`), as many shop
//! systems key them. Units left in `goods.stock`, orders in `orders` (1 live, 2 cancelled) keyed
//! by an order number, Redis `stock:<sku>`, and one stream of orders `orders` for every SKU,
//! group `g`, whose entries carry `sku`, `order_no` and `user`.
//!
//! Front half (`buy`): one Lua script checks and decrements the SKU's counter and appends the
//! entry. Back half (`consume`): the consumer the test steps by hand, one entry at a time:
//! XREADGROUP, the order row and the DB decrement in one transaction, then XACK; `swallow`
//! acknowledges an entry without its row (the consumer's swallowed error: the order is lost).
//! Faults: units taken in Redis with no entry (`lose_after_redis`) and orders beyond stock
//! written straight into the database (`oversell`).

use redis::streams::{StreamReadOptions, StreamReadReply};
use redis::AsyncCommands;

use super::{redis_conn, sale_prefix, Leftovers, SaleDb};

const DDL: &[&str] = &[
    "CREATE TABLE goods (
        sku VARCHAR(32) NOT NULL PRIMARY KEY,
        title VARCHAR(64) NOT NULL,
        stock INT NOT NULL
    ) ENGINE=InnoDB",
    "CREATE TABLE orders (
        id BIGINT AUTO_INCREMENT PRIMARY KEY,
        order_no VARCHAR(40) NOT NULL UNIQUE,
        sku VARCHAR(32) NOT NULL,
        user_id BIGINT NOT NULL,
        qty INT NOT NULL,
        status TINYINT NOT NULL DEFAULT 1,
        created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
        KEY idx_sku (sku)
    ) ENGINE=InnoDB",
];

/// Their Lua: 1 sold out, 0 taken (and the entry appended).
const BUY: &str = r"
local stock = tonumber(redis.call('GET', KEYS[1]))
if stock == nil or stock <= 0 then
  return 1
end
redis.call('DECR', KEYS[1])
redis.call('XADD', KEYS[2], '*', 'sku', ARGV[1], 'order_no', ARGV[2], 'user', ARGV[3])
return 0";

/// The stream's consumer group.
pub const GROUP: &str = "g";

/// The SKU-keyed sale (its consumer stepped by the test).
pub struct SkuStreamSale {
    pub prefix: String,
    pub db: SaleDb,
    pub stream: String,
    redis: redis::aio::MultiplexedConnection,
    orders: std::sync::atomic::AtomicU64,
    leftovers: Leftovers,
}

impl SkuStreamSale {
    /// Creates the sale with `goods` as `(sku, stock)` in the DB and Redis, and the stream's group.
    pub async fn start(goods: &[(&str, i64)]) -> Self {
        let prefix = sale_prefix("sku");
        let leftovers = Leftovers::new(&prefix, true, None);
        let db = SaleDb::create(&prefix, DDL).await;
        let mut redis = redis_conn().await;
        for &(sku, stock) in goods {
            sqlx::query("INSERT INTO goods (sku, title, stock) VALUES (?, ?, ?)")
                .bind(sku)
                .bind(format!("the {sku} item"))
                .bind(stock)
                .execute(&db.pool)
                .await
                .expect("the goods are seeded");
            let _: () = redis.set(stock_key(&prefix, sku), stock).await.unwrap();
        }
        let stream = format!("{prefix}:orders");
        let _: () = redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(&stream)
            .arg(GROUP)
            .arg("0")
            .arg("MKSTREAM")
            .query_async(&mut redis)
            .await
            .expect("the stream's group is created");
        Self { prefix, db, stream, redis, orders: Default::default(), leftovers }
    }

    /// The adapter file a user would write for this sale.
    pub fn adapter_toml(&self) -> String {
        format!(
            r#"[sale]
name = "skus-{prefix}"
settle_ms = 300

[stock]
table = "goods"
product = "sku"
remaining = "stock"
initial = "baseline"
name = "title"

[orders]
table = "orders"
product = "sku"
quantity_column = "qty"
status = "status"
live = [1]
released = [2]
order_id = "order_no"
created = "created_at"
user = "user_id"

[redis]
stock = "{prefix}:stock:${{id}}"

[inflight]
source = "redis_stream"
stream = "{stream}"
group = "{GROUP}"
product_field = "sku"
order_id_field = "order_no"

[repair]
rewrite = "delta"
"#,
            prefix = self.prefix,
            stream = self.stream,
        )
    }

    /// The SKU's Redis counter.
    pub fn stock_key(&self, sku: &str) -> String {
        stock_key(&self.prefix, sku)
    }

    /// A buyer takes one unit of `sku` (its order number returned), or finds it sold out.
    pub async fn buy(&self, sku: &str, user: u64) -> Option<String> {
        let n = self.orders.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let order_no = format!("{}-{n}", self.prefix);
        let taken: i64 = redis::Script::new(BUY)
            .key(self.stock_key(sku))
            .key(&self.stream)
            .arg(sku)
            .arg(&order_no)
            .arg(user)
            .invoke_async(&mut self.redis.clone())
            .await
            .expect("the buy script runs");
        (taken == 0).then_some(order_no)
    }

    /// The consumer takes the next entry and writes its row (with the DB's decrement), then
    /// acknowledges it; `swallow`: acknowledges it without its row. The entry's order number.
    async fn step(&self, swallow: bool) -> Option<String> {
        let mut redis = self.redis.clone();
        let reply: StreamReadReply = redis
            .xread_options(&[&self.stream], &[">"], &StreamReadOptions::default().group(GROUP, "c1").count(1))
            .await
            .expect("the consumer reads its group");
        let entry = reply.keys.into_iter().flat_map(|k| k.ids).next()?;
        let field = |name: &str| -> String { entry.get(name).expect("the entry carries its fields") };
        let (sku, order_no, user): (String, String, String) = (field("sku"), field("order_no"), field("user"));
        if !swallow {
            let mut tx = self.db.pool.begin().await.unwrap();
            sqlx::query("UPDATE goods SET stock = stock - 1 WHERE sku = ?").bind(&sku).execute(&mut *tx).await.unwrap();
            sqlx::query("INSERT INTO orders (order_no, sku, user_id, qty) VALUES (?, ?, ?, 1)")
                .bind(&order_no)
                .bind(&sku)
                .bind(user.parse::<u64>().unwrap())
                .execute(&mut *tx)
                .await
                .unwrap();
            tx.commit().await.unwrap();
        }
        let _: i64 = redis.xack(&self.stream, GROUP, &[&entry.id]).await.unwrap();
        Some(order_no)
    }

    /// The consumer writes the next entry's row; its order number (`None`: none waits).
    pub async fn consume_next(&self) -> Option<String> {
        self.step(false).await
    }

    /// The consumer writes every waiting entry's row.
    pub async fn drain(&self) {
        while self.step(false).await.is_some() {}
    }

    /// The consumer acknowledges the next entry without writing its row: the order is lost.
    pub async fn swallow_next(&self) -> String {
        self.step(true).await.expect("an entry waits")
    }

    /// `units` taken from the SKU's counter with no entry and no row (a request that died
    /// between its `DECR` and its `XADD`): Redis low by that many.
    pub async fn lose_after_redis(&self, sku: &str, units: i64) {
        let _: i64 = self.redis.clone().decr(self.stock_key(sku), units).await.unwrap();
    }

    /// `n` live orders of `sku` written straight into the database beyond its stock (the stock
    /// column goes below zero): the sale oversold by `n`.
    pub async fn oversell(&self, sku: &str, n: i64) {
        for i in 0..n {
            sqlx::query("INSERT INTO orders (order_no, sku, user_id, qty) VALUES (?, ?, ?, 1)")
                .bind(format!("{}-over-{i}", self.prefix))
                .bind(sku)
                .bind(9_000 + i)
                .execute(&self.db.pool)
                .await
                .unwrap();
        }
        sqlx::query("UPDATE goods SET stock = stock - ? WHERE sku = ?")
            .bind(n)
            .bind(sku)
            .execute(&self.db.pool)
            .await
            .unwrap();
    }

    pub async fn cleanup(self) {
        self.db.pool.close().await;
        self.leftovers.remove().await;
    }
}

fn stock_key(prefix: &str, sku: &str) -> String {
    format!("{prefix}:stock:{sku}")
}
