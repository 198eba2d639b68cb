//! A sale shaped like a Node flash sale on BullMQ: the units left in `products.stock` (the
//! initial stock in `products.total_stock`), orders in `orders` keyed by a string `order_no`
//! with text statuses (`created`, `paid`, `cancelled`), Redis `flash:stock:<id>`, and a
//! BullMQ queue `orders` under the prefix `<sale>:bull` whose jobs' `data` is
//! `{"userId", "productId", "orderNo"}`.
//!
//! Front half (`buy`): one Lua script takes the unit and adds the job the way BullMQ's own
//! `addStandardJob` does (the queue's `id` counter, the job hash with `name`, `data`, `opts`,
//! `timestamp`, `delay`, `priority`, the id pushed on `wait`, an `added` event). Back half
//! (the worker): the job moved from `wait` to `active` (BullMQ's `moveToActive`), the order
//! row and the DB decrement in one transaction, then the job moved to `completed` with its
//! `finishedOn` (BullMQ's `moveToFinished`). Faults: a waiting job lost after Redis took its
//! unit, and a worker that wrote the row and died before completing the job.

use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::MySqlPool;

use super::control::{ConsumerHandle, ConsumerSignals};
use super::{db, rd, redis_conn, redis_int, sale_prefix, Answer, Buy, Leftovers, SaleDb, SaleError};

const DDL: &[&str] = &[
    "CREATE TABLE products (
        id BIGINT PRIMARY KEY,
        name VARCHAR(64) NOT NULL,
        total_stock INT NOT NULL,
        stock INT NOT NULL
    ) ENGINE=InnoDB",
    "CREATE TABLE orders (
        id BIGINT AUTO_INCREMENT PRIMARY KEY,
        order_no VARCHAR(64) NOT NULL UNIQUE,
        product_id BIGINT NOT NULL,
        user_id BIGINT NOT NULL,
        status VARCHAR(16) NOT NULL DEFAULT 'created',
        created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
        KEY idx_product (product_id)
    ) ENGINE=InnoDB",
];

/// Their script: 0 sold out, else the job id. KEYS: stock, the queue's id counter, wait,
/// events; ARGV: the job key prefix, user, product, order no, timestamp.
const BUY: &str = r#"
local stock = tonumber(redis.call('GET', KEYS[1]))
if stock == nil or stock <= 0 then
  return 0
end
redis.call('DECR', KEYS[1])
local jobId = redis.call('INCR', KEYS[2])
local data = cjson.encode({ userId = tonumber(ARGV[2]), productId = tonumber(ARGV[3]), orderNo = ARGV[4] })
redis.call('HMSET', ARGV[1] .. jobId, 'name', 'order', 'data', data, 'opts', '{"attempts":3}',
  'timestamp', ARGV[5], 'delay', 0, 'priority', 0)
redis.call('LPUSH', KEYS[3], jobId)
redis.call('XADD', KEYS[4], 'MAXLEN', '~', 10000, '*', 'event', 'added', 'jobId', jobId, 'name', 'order')
return jobId"#;

/// BullMQ's `moveToFinished`, cut to what this worker needs: off `active`, on `completed`.
const COMPLETE: &str = r#"
if redis.call('LREM', KEYS[1], -1, ARGV[1]) == 0 then
  return 0
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('HSET', ARGV[3] .. ARGV[1], 'finishedOn', ARGV[2], 'returnvalue', '"ok"')
return 1"#;

/// The queue's name.
pub const QUEUE: &str = "orders";

/// The Node BullMQ sale, running (its worker started).
pub struct NodeBullmqSale {
    pub prefix: String,
    pub db: SaleDb,
    redis: redis::aio::MultiplexedConnection,
    worker: ConsumerHandle,
    leftovers: Leftovers,
}

/// The queue's keys.
#[derive(Clone)]
struct Queue {
    /// `<prefix>:bull:orders:`, the start of every key of the queue and of each job's hash.
    base: String,
}

impl Queue {
    fn key(&self, name: &str) -> String {
        format!("{}{name}", self.base)
    }
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("the clock is after 1970").as_millis() as u64
}

impl NodeBullmqSale {
    /// Creates the sale with `products` as `(id, stock)` in the DB and Redis, and starts the
    /// worker.
    pub async fn start(products: &[(i64, i64)]) -> Self {
        let prefix = sale_prefix("nb");
        let leftovers = Leftovers::new(&prefix, true, None);
        let db = SaleDb::create(&prefix, DDL).await;
        let mut redis = redis_conn().await;
        for &(id, stock) in products {
            sqlx::query("INSERT INTO products (id, name, total_stock, stock) VALUES (?, ?, ?, ?)")
                .bind(id)
                .bind(format!("item {id}"))
                .bind(stock)
                .bind(stock)
                .execute(&db.pool)
                .await
                .expect("the products are seeded");
            let _: () = redis::cmd("SET").arg(stock_key(&prefix, id)).arg(stock).query_async(&mut redis).await.unwrap();
        }
        // A connection of the worker's own: its blocking moves would hold up the buyers'.
        let blocking = redis_conn().await;
        let queue = Queue { base: queue_base(&prefix) };
        let pool = db.pool.clone();
        let worker = ConsumerHandle::spawn(move |signals| work(blocking, queue, pool, signals));
        Self { prefix, db, redis, worker, leftovers }
    }

    /// The adapter file a user would write for this sale.
    pub fn adapter_toml(&self) -> String {
        format!(
            r#"[sale]
name = "node-bullmq-{prefix}"

[stock]
table = "products"
product = "id"
remaining = "stock"
initial = "column:total_stock"
name = "name"

[orders]
table = "orders"
product = "product_id"
quantity = 1
status = "status"
live = ["created", "paid"]
released = ["cancelled"]
order_id = "order_no"
created = "created_at"
user = "user_id"

[redis]
stock = "{prefix}:flash:stock:${{id}}"

[inflight]
source = "bullmq"
queue = "{QUEUE}"
prefix = "{prefix}:bull"
product_field = "productId"
order_id_field = "orderNo"

[repair]
rewrite = "delta"
"#,
            prefix = self.prefix,
        )
    }

    fn queue(&self) -> Queue {
        Queue { base: queue_base(&self.prefix) }
    }

    /// The oldest waiting job is gone, its hash with it (evicted, or removed by hand), after
    /// Redis took its unit: a unit nobody holds (REDIS_LOW 1). Call it with the worker paused.
    pub async fn lose_waiting_job(&self) {
        let q = self.queue();
        let mut redis = self.redis.clone();
        let id: Option<String> = redis::cmd("RPOP").arg(q.key("wait")).query_async(&mut redis).await.unwrap();
        let id = id.expect("a job was waiting to be lost");
        let _: () = redis::cmd("DEL").arg(q.key(&id)).query_async(&mut redis).await.unwrap();
    }

    /// A worker took the oldest waiting job, wrote its order row and died before completing
    /// it: the job stays in `active` while its row exists. Call it with the worker paused.
    pub async fn crash_after_the_row(&self) {
        let q = self.queue();
        let mut redis = self.redis.clone();
        let id: Option<String> = redis::cmd("LMOVE")
            .arg(q.key("wait"))
            .arg(q.key("active"))
            .arg("RIGHT")
            .arg("LEFT")
            .query_async(&mut redis)
            .await
            .unwrap();
        let id = id.expect("a job was waiting");
        let data: String = redis::cmd("HGET").arg(q.key(&id)).arg("data").query_async(&mut redis).await.unwrap();
        let job: Job = serde_json::from_str(&data).expect("a job's data is the sale's JSON");
        write_order(&self.db.pool, &job).await.expect("the order is written");
    }

    /// Stops the worker between jobs; jobs added from now on wait.
    pub async fn pause_worker(&self) {
        self.worker.pause().await;
    }

    /// Starts working again.
    pub async fn resume_worker(&self) {
        self.worker.resume().await;
    }

    /// Jobs waiting plus jobs active.
    pub async fn unfinished(&self) -> i64 {
        let q = self.queue();
        let mut redis = self.redis.clone();
        let wait: i64 = redis::cmd("LLEN").arg(q.key("wait")).query_async(&mut redis).await.unwrap();
        let active: i64 = redis::cmd("LLEN").arg(q.key("active")).query_async(&mut redis).await.unwrap();
        wait + active
    }

    /// Jobs waiting.
    pub async fn waiting(&self) -> i64 {
        redis::cmd("LLEN").arg(self.queue().key("wait")).query_async(&mut self.redis.clone()).await.unwrap()
    }

    /// Jobs completed.
    pub async fn completed(&self) -> i64 {
        redis::cmd("ZCARD").arg(self.queue().key("completed")).query_async(&mut self.redis.clone()).await.unwrap()
    }

    /// `products.stock` of a product.
    pub async fn db_stock(&self, product: i64) -> i64 {
        self.db.scalar("SELECT CAST(stock AS SIGNED) FROM products WHERE id = ?", product).await
    }

    /// The Redis counter of a product.
    pub async fn redis_stock(&self, product: i64) -> Option<i64> {
        redis_int(&mut self.redis.clone(), &stock_key(&self.prefix, product)).await
    }

    /// Live orders of a product.
    pub async fn orders(&self, product: i64) -> i64 {
        self.db
            .scalar("SELECT COUNT(*) FROM orders WHERE product_id = ? AND status IN ('created', 'paid')", product)
            .await
    }

    /// Stops the worker, deletes the keys (the queue's with them) and the database.
    pub async fn cleanup(&self) {
        self.worker.stop().await;
        self.db.pool.close().await;
        self.leftovers.remove().await;
    }
}

impl Buy for NodeBullmqSale {
    async fn buy(&self, user: i64, product: i64) -> Result<Answer, SaleError> {
        let q = self.queue();
        let order_no = format!("NB{user}-{product}");
        let job: i64 = redis::Script::new(BUY)
            .key(stock_key(&self.prefix, product))
            .key(q.key("id"))
            .key(q.key("wait"))
            .key(q.key("events"))
            .arg(&q.base)
            .arg(user)
            .arg(product)
            .arg(order_no)
            .arg(now_ms())
            .invoke_async(&mut self.redis.clone())
            .await
            .map_err(rd("add the order job"))?;
        Ok(if job > 0 { Answer::Accepted } else { Answer::SoldOut })
    }
}

fn stock_key(prefix: &str, product: i64) -> String {
    format!("{prefix}:flash:stock:{product}")
}

fn queue_base(prefix: &str) -> String {
    format!("{prefix}:bull:{QUEUE}:")
}

/// A job's `data`, as their producer writes it.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Job {
    user_id: i64,
    product_id: i64,
    order_no: String,
}

/// Their worker: a job from `wait` to `active`, its order written, the job completed.
async fn work(
    mut redis: redis::aio::MultiplexedConnection,
    queue: Queue,
    pool: MySqlPool,
    mut signals: ConsumerSignals,
) {
    let complete = redis::Script::new(COMPLETE);
    while signals.go_on().await {
        let id: Option<String> = redis::cmd("BLMOVE")
            .arg(queue.key("wait"))
            .arg(queue.key("active"))
            .arg("RIGHT")
            .arg("LEFT")
            .arg(0.1)
            .query_async(&mut redis)
            .await
            .expect("Redis answers BLMOVE");
        let Some(id) = id else { continue };
        let data: String = redis::cmd("HGET")
            .arg(queue.key(&id))
            .arg("data")
            .query_async(&mut redis)
            .await
            .expect("an active job has its data");
        let job: Job = serde_json::from_str(&data).expect("a job's data is the sale's JSON");
        for _ in 0..10 {
            match write_order(&pool, &job).await {
                Err(e) if super::is_retryable(&e) => continue,
                written => {
                    written.expect("the order is written");
                    break;
                }
            }
        }
        let _: i64 = complete
            .key(queue.key("active"))
            .key(queue.key("completed"))
            .arg(&id)
            .arg(now_ms())
            .arg(&queue.base)
            .invoke_async(&mut redis)
            .await
            .expect("the job is completed");
    }
}

async fn write_order(pool: &MySqlPool, job: &Job) -> Result<(), SaleError> {
    let mut tx = pool.begin().await.map_err(db("begin the order"))?;
    let inserted = sqlx::query("INSERT IGNORE INTO orders (order_no, product_id, user_id) VALUES (?, ?, ?)")
        .bind(&job.order_no)
        .bind(job.product_id)
        .bind(job.user_id)
        .execute(&mut *tx)
        .await
        .map_err(db("insert the order"))?
        .rows_affected();
    if inserted == 0 {
        // Written by a worker that died before completing the job (BullMQ retries it).
        return tx.commit().await.map_err(db("commit nothing"));
    }
    sqlx::query("UPDATE products SET stock = stock - 1 WHERE id = ? AND stock > 0")
        .bind(job.product_id)
        .execute(&mut *tx)
        .await
        .map_err(db("take the unit from the product"))?;
    tx.commit().await.map_err(db("commit the order"))
}
