//! A sale shaped like a widely copied Java course's voucher flash sale: the units left in
//! `tb_seckill_voucher.stock`, orders in `tb_voucher_order` (1 unpaid, 2 paid, 3 used,
//! 4 cancelled, 5 refunding, 6 refunded), Redis `seckill:stock:<id>` and the buyer set
//! `seckill:order:<id>`, and one stream `stream.orders` for every voucher, group `g1`, whose
//! entries carry `userId`, `voucherId` and the order id `id`.
//!
//! Front half (`buy`): the order id comes from a Redis counter, then one Lua script checks the
//! stock and the buyer set, decrements, adds the buyer and appends the stream entry, atomically.
//! Back half (the consumer): XREADGROUP, the order row and the DB decrement in one transaction,
//! then XACK; at start it handles its pending entries first. Faults: a unit taken with no entry,
//! a consumer that acknowledges an entry without writing its row (a swallowed error: the
//! buyer was told "taken", the order is lost), a consumer that falls behind (each entry a row
//! and still pending a while), a deleted key, orders beyond stock, and a cancellation (their
//! cancel path).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use redis::streams::{StreamReadOptions, StreamReadReply};
use redis::AsyncCommands;
use sqlx::MySqlPool;

use super::control::{ConsumerHandle, ConsumerSignals};
use super::{db, rd, redis_conn, redis_int, sale_prefix, Answer, Buy, Leftovers, SaleDb, SaleError};

const DDL: &[&str] = &[
    "CREATE TABLE tb_seckill_voucher (
        voucher_id BIGINT PRIMARY KEY,
        stock INT NOT NULL,
        create_time DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
    ) ENGINE=InnoDB",
    "CREATE TABLE tb_voucher_order (
        id BIGINT PRIMARY KEY,
        user_id BIGINT NOT NULL,
        voucher_id BIGINT NOT NULL,
        status TINYINT NOT NULL DEFAULT 1,
        create_time DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
        KEY idx_voucher (voucher_id)
    ) ENGINE=InnoDB",
];

/// Their Lua: 1 sold out, 2 already bought, 0 taken (and the entry appended).
const SECKILL: &str = r"
local stock = tonumber(redis.call('GET', KEYS[1]))
if stock == nil or stock <= 0 then
  return 1
end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  return 2
end
redis.call('INCRBY', KEYS[1], -1)
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('XADD', KEYS[3], '*', 'userId', ARGV[1], 'voucherId', ARGV[2], 'id', ARGV[3])
return 0";

/// The stream's consumer group.
pub const GROUP: &str = "g1";

/// Order statuses of the sale.
pub mod status {
    pub const UNPAID: i64 = 1;
    pub const PAID: i64 = 2;
    pub const CANCELLED: i64 = 4;
}

/// The course-shaped sale, running (its consumer started).
pub struct CourseStreamSale {
    pub prefix: String,
    pub db: SaleDb,
    /// The one stream of orders, for every voucher.
    pub stream: String,
    redis: redis::aio::MultiplexedConnection,
    consumer: ConsumerHandle,
    swallow: Swallow,
    behind: Behind,
    leftovers: Leftovers,
}

/// The consumer's pace: how long it spends on each entry between writing its row and
/// acknowledging it, in microseconds (0: as fast as it can).
#[derive(Clone, Default)]
struct Behind(Arc<AtomicU64>);

impl Behind {
    fn per_entry(&self) -> std::time::Duration {
        std::time::Duration::from_micros(self.0.load(Ordering::SeqCst))
    }
}

/// The consumer's fault: how many entries to acknowledge without their row, and the order ids
/// it let go so.
#[derive(Clone, Default)]
struct Swallow {
    next: Arc<AtomicU32>,
    orders: Arc<Mutex<Vec<i64>>>,
}

impl Swallow {
    /// True (and the order noted) when this entry is to be acknowledged without its row.
    fn take(&self, order: i64) -> bool {
        let swallowed = self.next.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok();
        if swallowed {
            self.orders.lock().expect("the swallowed list is not poisoned").push(order);
        }
        swallowed
    }
}

impl CourseStreamSale {
    /// Creates the sale with `vouchers` as `(id, stock)` in the DB and Redis, the stream and its
    /// group, and starts the consumer.
    pub async fn start(vouchers: &[(i64, i64)]) -> Self {
        let prefix = sale_prefix("cs");
        let leftovers = Leftovers::new(&prefix, true, None);
        let db = SaleDb::create(&prefix, DDL).await;
        let mut redis = redis_conn().await;
        for &(id, stock) in vouchers {
            sqlx::query("INSERT INTO tb_seckill_voucher (voucher_id, stock) VALUES (?, ?)")
                .bind(id)
                .bind(stock)
                .execute(&db.pool)
                .await
                .expect("the vouchers are seeded");
            let _: () = redis::cmd("SET").arg(stock_key(&prefix, id)).arg(stock).query_async(&mut redis).await.unwrap();
        }
        let stream = format!("{prefix}:stream.orders");
        let _: () = redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(&stream)
            .arg(GROUP)
            .arg("0")
            .arg("MKSTREAM")
            .query_async(&mut redis)
            .await
            .expect("the stream's group is created");
        // A connection of the consumer's own: its blocking reads would hold up the buyers'.
        let blocking = redis_conn().await;
        let (pool, s) = (db.pool.clone(), stream.clone());
        let swallow = Swallow::default();
        let behind = Behind::default();
        let (fault, pace) = (swallow.clone(), behind.clone());
        let consumer = ConsumerHandle::spawn(move |signals| consume(blocking, s, pool, fault, pace, signals));
        Self { prefix, db, stream, redis, consumer, swallow, behind, leftovers }
    }

    /// The adapter file a user would write for this sale, with this sale's database and keys.
    pub fn adapter_toml(&self) -> String {
        format!(
            r#"[sale]
name = "course-stream-{prefix}"

[stock]
table = "tb_seckill_voucher"
product = "voucher_id"
remaining = "stock"
initial = "baseline"

[orders]
table = "tb_voucher_order"
product = "voucher_id"
quantity = 1
status = "status"
live = [1, 2, 3, 5]
released = [4, 6]
reserving = []
order_id = "id"
created = "create_time"
user = "user_id"

[redis]
stock = "{prefix}:seckill:stock:${{id}}"
buyers = "{prefix}:seckill:order:${{id}}"

[inflight]
source = "redis_stream"
stream = "{stream}"
group = "{GROUP}"
product_field = "voucherId"
order_id_field = "id"

[repair]
rewrite = "delta"
"#,
            prefix = self.prefix,
            stream = self.stream,
        )
    }

    /// Redis took a unit and recorded a buyer (user -1), and no entry reached the stream: a
    /// unit nobody holds (REDIS_LOW 1).
    pub async fn lose_one_after_redis(&self, voucher: i64) {
        let mut redis = self.redis.clone();
        let taken: i64 =
            redis::cmd("DECR").arg(stock_key(&self.prefix, voucher)).query_async(&mut redis).await.unwrap();
        assert!(taken >= 0, "a unit was left to lose");
        let _: () =
            redis::cmd("SADD").arg(buyers_key(&self.prefix, voucher)).arg(-1).query_async(&mut redis).await.unwrap();
    }

    /// The consumer acknowledges the next `n` entries without writing their rows, as one that
    /// swallows an error does: each such order was accepted, its unit taken in Redis, and it
    /// never becomes a row (lost; REDIS_LOW by one each).
    pub fn swallow_next(&self, n: u32) {
        self.swallow.next.fetch_add(n, Ordering::SeqCst);
    }

    /// The consumer spends `per_entry` on each entry after its row is committed and before its
    /// `XACK` (a call to another service, as consumers make to tell the buyer): it falls behind
    /// its buyers, and each entry is a row while still pending for that long. `Duration::ZERO`:
    /// full speed again, from its next entry.
    pub fn fall_behind(&self, per_entry: std::time::Duration) {
        self.behind.0.store(per_entry.as_micros() as u64, Ordering::SeqCst);
    }

    /// The order ids the consumer acknowledged without a row so far.
    pub fn swallowed(&self) -> Vec<i64> {
        self.swallow.orders.lock().expect("the swallowed list is not poisoned").clone()
    }

    /// The voucher's stock key is gone (KEY_MISSING).
    pub async fn delete_key(&self, voucher: i64) {
        let _: () =
            redis::cmd("DEL").arg(stock_key(&self.prefix, voucher)).query_async(&mut self.redis.clone()).await.unwrap();
    }

    /// Someone writes what is not a whole number into the voucher's stock key (KEY_UNREADABLE);
    /// returns the key.
    pub async fn garble_key(&self, voucher: i64, value: &str) -> String {
        let key = stock_key(&self.prefix, voucher);
        let _: () = redis::cmd("SET").arg(&key).arg(value).query_async(&mut self.redis.clone()).await.unwrap();
        key
    }

    /// `n` unpaid orders written straight into the DB beyond stock, the stock column going
    /// below zero (OVERSOLD); Redis untouched. Call it once the voucher sold out.
    pub async fn oversell(&self, voucher: i64, n: i64) {
        let mut tx = self.db.pool.begin().await.unwrap();
        for i in 0..n {
            let id = self.next_order_id().await.expect("Redis hands out an order id");
            sqlx::query("INSERT INTO tb_voucher_order (id, user_id, voucher_id, status) VALUES (?, ?, ?, 1)")
                .bind(id)
                .bind(1_000_000 + i)
                .bind(voucher)
                .execute(&mut *tx)
                .await
                .unwrap();
        }
        sqlx::query("UPDATE tb_seckill_voucher SET stock = stock - ? WHERE voucher_id = ?")
            .bind(n)
            .bind(voucher)
            .execute(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }

    /// Their cancel path: an unpaid or paid order becomes cancelled (4), its unit goes back to
    /// the DB stock and to Redis, and the buyer may buy again. False when the order was not
    /// live.
    pub async fn cancel(&self, order: i64) -> bool {
        let mut tx = self.db.pool.begin().await.unwrap();
        let row: Option<(i64, i64)> = sqlx::query_as(
            "SELECT user_id, voucher_id FROM tb_voucher_order WHERE id = ? AND status IN (1, 2) FOR UPDATE",
        )
        .bind(order)
        .fetch_optional(&mut *tx)
        .await
        .unwrap();
        let Some((user, voucher)) = row else { return false };
        sqlx::query("UPDATE tb_voucher_order SET status = 4 WHERE id = ?").bind(order).execute(&mut *tx).await.unwrap();
        sqlx::query("UPDATE tb_seckill_voucher SET stock = stock + 1 WHERE voucher_id = ?")
            .bind(voucher)
            .execute(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        let mut redis = self.redis.clone();
        let _: () = redis::cmd("INCR").arg(stock_key(&self.prefix, voucher)).query_async(&mut redis).await.unwrap();
        let _: () =
            redis::cmd("SREM").arg(buyers_key(&self.prefix, voucher)).arg(user).query_async(&mut redis).await.unwrap();
        true
    }

    /// Moves an order to `status` as their other paths do (2 paid, 3 used, 5 refunding,
    /// 6 refunded) with no stock change; or any label at all, the way a sale that stores every
    /// real order as -1 "invalid" does, for `adapter check` to show the counts per status.
    pub async fn set_status(&self, order: i64, status: i64) {
        sqlx::query("UPDATE tb_voucher_order SET status = ? WHERE id = ?")
            .bind(status)
            .bind(order)
            .execute(&self.db.pool)
            .await
            .unwrap();
    }

    /// Stops the consumer between entries; entries appended from now on wait in the stream.
    pub async fn pause_consumer(&self) {
        self.consumer.pause().await;
    }

    /// Starts consuming again.
    pub async fn resume_consumer(&self) {
        self.consumer.resume().await;
    }

    /// `tb_seckill_voucher.stock` of a voucher.
    pub async fn db_stock(&self, voucher: i64) -> i64 {
        self.db.scalar("SELECT CAST(stock AS SIGNED) FROM tb_seckill_voucher WHERE voucher_id = ?", voucher).await
    }

    /// The Redis counter of a voucher (None: the key is missing).
    pub async fn redis_stock(&self, voucher: i64) -> Option<i64> {
        redis_int(&mut self.redis.clone(), &stock_key(&self.prefix, voucher)).await
    }

    /// Live orders (unpaid, paid, used, refunding) of a voucher.
    pub async fn orders(&self, voucher: i64) -> i64 {
        self.db
            .scalar("SELECT COUNT(*) FROM tb_voucher_order WHERE voucher_id = ? AND status IN (1, 2, 3, 5)", voucher)
            .await
    }

    /// The ids of a voucher's orders in a status, oldest first.
    pub async fn order_ids(&self, voucher: i64, status: i64) -> Vec<i64> {
        sqlx::query_scalar("SELECT id FROM tb_voucher_order WHERE voucher_id = ? AND status = ? ORDER BY id")
            .bind(voucher)
            .bind(status)
            .fetch_all(&self.db.pool)
            .await
            .unwrap()
    }

    /// Buyers in the voucher's buyer set.
    pub async fn buyers(&self, voucher: i64) -> i64 {
        redis::cmd("SCARD").arg(buyers_key(&self.prefix, voucher)).query_async(&mut self.redis.clone()).await.unwrap()
    }

    /// Entries of the group not yet acknowledged plus entries not yet delivered (the lag).
    pub async fn stream_backlog(&self) -> i64 {
        let groups: Vec<redis::Value> =
            redis::cmd("XINFO").arg("GROUPS").arg(&self.stream).query_async(&mut self.redis.clone()).await.unwrap();
        let group: std::collections::HashMap<String, redis::Value> =
            redis::from_redis_value(&groups[0]).expect("XINFO GROUPS gives a map per group");
        let int = |name: &str| match &group[name] {
            redis::Value::Int(n) => *n,
            _ => 0,
        };
        int("pending") + int("lag")
    }

    /// Stops the consumer, deletes the keys (the stream with them) and the database.
    pub async fn cleanup(&self) {
        self.consumer.stop().await;
        self.db.pool.close().await;
        self.leftovers.remove().await;
    }

    /// Their id generator: a Redis counter of the sale.
    async fn next_order_id(&self) -> Result<i64, SaleError> {
        redis::cmd("INCR")
            .arg(format!("{}:icr:order", self.prefix))
            .query_async(&mut self.redis.clone())
            .await
            .map_err(rd("hand out an order id"))
    }
}

impl Buy for CourseStreamSale {
    async fn buy(&self, user: i64, voucher: i64) -> Result<Answer, SaleError> {
        let order = self.next_order_id().await?;
        let answer: i64 = redis::Script::new(SECKILL)
            .key(stock_key(&self.prefix, voucher))
            .key(buyers_key(&self.prefix, voucher))
            .key(&self.stream)
            .arg(user)
            .arg(voucher)
            .arg(order)
            .invoke_async(&mut self.redis.clone())
            .await
            .map_err(rd("run the seckill script"))?;
        Ok(match answer {
            0 => Answer::Accepted,
            2 => Answer::Refused,
            _ => Answer::SoldOut,
        })
    }
}

fn stock_key(prefix: &str, voucher: i64) -> String {
    format!("{prefix}:seckill:stock:{voucher}")
}

fn buyers_key(prefix: &str, voucher: i64) -> String {
    format!("{prefix}:seckill:order:{voucher}")
}

/// Their consumer: pending entries first (id 0), then new ones (`>`), each written and acked.
async fn consume(
    mut redis: redis::aio::MultiplexedConnection,
    stream: String,
    pool: MySqlPool,
    swallow: Swallow,
    behind: Behind,
    mut signals: ConsumerSignals,
) {
    let mut from = "0";
    while signals.go_on().await {
        let mut options = StreamReadOptions::default().group(GROUP, "c1").count(20);
        if from == ">" {
            options = options.block(100);
        }
        let reply: Option<StreamReadReply> =
            redis.xread_options(&[&stream], &[from], &options).await.expect("Redis answers XREADGROUP");
        let entries = reply.and_then(|r| r.keys.into_iter().next()).map(|k| k.ids).unwrap_or_default();
        if entries.is_empty() && from == "0" {
            from = ">";
        }
        for entry in entries {
            let field = |name: &str| entry.get::<i64>(name).expect("the entry carries userId, voucherId and id");
            let (user, voucher, order) = (field("userId"), field("voucherId"), field("id"));
            // The swallowed entry: "logged" and acknowledged, its row never written.
            let tries = if swallow.take(order) { 0 } else { 10 };
            for _ in 0..tries {
                match write_order(&pool, order, user, voucher).await {
                    Err(e) if super::is_retryable(&e) => continue,
                    written => {
                        written.expect("the order is written");
                        break;
                    }
                }
            }
            let pace = behind.per_entry();
            if !pace.is_zero() {
                tokio::time::sleep(pace).await;
            }
            let _: i64 =
                redis::cmd("XACK").arg(&stream).arg(GROUP).arg(&entry.id).query_async(&mut redis).await.unwrap();
        }
    }
}

async fn write_order(pool: &MySqlPool, order: i64, user: i64, voucher: i64) -> Result<(), SaleError> {
    let mut tx = pool.begin().await.map_err(db("begin the order"))?;
    let inserted =
        sqlx::query("INSERT IGNORE INTO tb_voucher_order (id, user_id, voucher_id, status) VALUES (?, ?, ?, 1)")
            .bind(order)
            .bind(user)
            .bind(voucher)
            .execute(&mut *tx)
            .await
            .map_err(db("insert the order"))?
            .rows_affected();
    if inserted == 0 {
        // Written before the crash that left the entry pending.
        return tx.commit().await.map_err(db("commit nothing"));
    }
    let taken = sqlx::query("UPDATE tb_seckill_voucher SET stock = stock - 1 WHERE voucher_id = ? AND stock > 0")
        .bind(voucher)
        .execute(&mut *tx)
        .await
        .map_err(db("take the unit from the voucher"))?
        .rows_affected();
    if taken == 0 {
        // Their consumer logs "stock short" and drops the order.
        return tx.rollback().await.map_err(db("roll back the order"));
    }
    tx.commit().await.map_err(db("commit the order"))
}
