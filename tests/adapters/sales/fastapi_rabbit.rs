//! A sale shaped like a public Python/FastAPI flash sale: only the units left are stored
//! (`goods.stock`, no initial stock), one unit per order (`orders`, status 1 = done), a Redis
//! string counter per product taken by a Lua script, and a durable RabbitMQ queue of
//! `{user_id, goods_id}` messages (no order id) that a consumer turns into rows.
//!
//! Front half (`buy`): the Lua script checks `stock:<id>` >= 1 and decrements it, then the API
//! publishes the message (with a publisher confirm) and answers "accepted". Back half (the
//! consumer): in one transaction `UPDATE goods ... WHERE stock >= 1` and the order row, then the
//! ack.
//!
//! The consumer behaves as the public one does, not as we would write it (issue 47): it sets
//! no prefetch limit, so RabbitMQ hands it the whole backlog at once and the queue shows 0 ready
//! while it works through them one by one, each unacknowledged until its turn is done; a
//! deadlock (MariaDB 1213) is tried again a few times and then swallowed; any failure is
//! acknowledged (the order is lost, its unit stays taken in Redis), never requeued.
//!
//! Its faults: a message lost after Redis took the unit, a restart that overwrites Redis from
//! the DB while messages wait, a paused consumer, and a `goods` row held locked by another
//! transaction (`lock_goods`), behind which the consumer sits on every message it was handed.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicCancelOptions, BasicConsumeOptions, BasicPublishOptions, ConfirmSelectOptions,
    QueueDeclareOptions,
};
use lapin::types::FieldTable;
use lapin::{BasicProperties, Channel};
use serde::{Deserialize, Serialize};
use sqlx::{Connection, Executor, MySqlConnection, MySqlPool};

use super::control::{ConsumerHandle, ConsumerSignals};
use super::{amqp_connection, amqp_url, db, db_error_number, management_url, mq, rd, redis_conn, redis_int};
use super::{sale_prefix, Answer, Buy, Leftovers, SaleDb, SaleError};

const DDL: &[&str] = &[
    "CREATE TABLE goods (
        id BIGINT PRIMARY KEY,
        title VARCHAR(128) NOT NULL,
        stock INT NOT NULL
    ) ENGINE=InnoDB",
    "CREATE TABLE orders (
        id BIGINT AUTO_INCREMENT PRIMARY KEY,
        user_id BIGINT NOT NULL,
        goods_id BIGINT NOT NULL,
        status TINYINT NOT NULL DEFAULT 1,
        KEY idx_goods (goods_id)
    ) ENGINE=InnoDB",
];

/// How many times their consumer tries an order InnoDB chose as a deadlock's victim (1213)
/// before it gives up on it (and acknowledges it: the order is lost).
const DEADLOCK_TRIES: usize = 3;

/// Their Lua: take one unit when at least one is left.
const TAKE_ONE: &str = r"
local stock = tonumber(redis.call('GET', KEYS[1]) or '0')
if stock >= 1 then
  redis.call('DECR', KEYS[1])
  return 1
end
return 0";

/// The queue's message: who bought what, no order id.
#[derive(Debug, Serialize, Deserialize)]
struct OrderMessage {
    user_id: i64,
    goods_id: i64,
}

/// What the consumer acknowledged: the sale's own truth about the messages it took.
#[derive(Debug, Default)]
struct Acks {
    /// Messages acknowledged, whatever became of them.
    all: AtomicI64,
    /// Of them, orders whose transaction failed (acknowledged all the same: lost).
    failed: AtomicI64,
}

/// The FastAPI-shaped sale, running (its consumer started).
pub struct FastapiRabbitSale {
    pub prefix: String,
    pub db: SaleDb,
    /// The durable queue of order messages.
    pub queue: String,
    redis: redis::aio::MultiplexedConnection,
    amqp: lapin::Connection,
    publish: Channel,
    consumer: ConsumerHandle,
    acks: Arc<Acks>,
    leftovers: Leftovers,
}

/// A product's `goods` row held locked (`SELECT ... FOR UPDATE`) by a transaction open on a
/// connection of its own, until [`GoodsLock::release`]: the consumer's `UPDATE` of that row
/// waits, and with it every message the consumer was handed.
pub struct GoodsLock {
    conn: MySqlConnection,
    product: i64,
    taken: Instant,
    /// The server's `innodb_lock_wait_timeout`: the consumer's `UPDATE` fails past it.
    lock_wait_timeout: Duration,
}

impl FastapiRabbitSale {
    /// Creates the sale: its tables, `products` as `(id, stock)` in `goods` and in Redis, its
    /// queue, and starts its consumer.
    pub async fn start(products: &[(i64, i64)]) -> Self {
        let prefix = sale_prefix("fr");
        let queue = format!("{prefix}.seckill.orders");
        let leftovers = Leftovers::new(&prefix, true, Some(&queue));
        let db = SaleDb::create(&prefix, DDL).await;
        let mut redis = redis_conn().await;
        for &(id, stock) in products {
            sqlx::query("INSERT INTO goods (id, title, stock) VALUES (?, ?, ?)")
                .bind(id)
                .bind(format!("goods {id}"))
                .bind(stock)
                .execute(&db.pool)
                .await
                .expect("the goods are seeded");
            let _: () = redis::cmd("SET").arg(stock_key(&prefix, id)).arg(stock).query_async(&mut redis).await.unwrap();
        }
        let amqp = amqp_connection().await;
        let publish = amqp.create_channel().await.expect("a RabbitMQ channel opens");
        publish
            .queue_declare(
                queue.as_str().into(),
                QueueDeclareOptions { durable: true, ..QueueDeclareOptions::default() },
                FieldTable::default(),
            )
            .await
            .expect("the order queue is declared");
        publish.confirm_select(ConfirmSelectOptions::default()).await.expect("publisher confirms are on");
        // No `basic_qos`: like theirs, the consumer takes every message RabbitMQ has for it.
        let channel = amqp.create_channel().await.expect("the consumer's channel opens");
        let acks = Arc::new(Acks::default());
        let (pool, q, counted) = (db.pool.clone(), queue.clone(), Arc::clone(&acks));
        let consumer = ConsumerHandle::spawn(move |signals| consume(channel, q, pool, counted, signals));
        described_by_statistics(&queue).await;
        Self { prefix, db, queue, redis, amqp, publish, consumer, acks, leftovers }
    }

    /// The adapter file a user would write for this sale, with this sale's database, keys and
    /// queue, and the RabbitMQ management API (where the messages the consumer holds are seen).
    pub fn adapter_toml(&self) -> String {
        self.file_text(Some(&management_url()))
    }

    /// The same file naming no management API: what the consumer holds cannot be seen.
    pub fn adapter_toml_without_management(&self) -> String {
        self.file_text(None)
    }

    fn file_text(&self, management: Option<&str>) -> String {
        let management = management.map(|url| format!("management_url = \"{url}\"\n")).unwrap_or_default();
        format!(
            r#"[sale]
name = "fastapi-rabbit-{prefix}"

[stock]
table = "goods"
product = "id"
remaining = "stock"
initial = "baseline"
name = "title"

[orders]
table = "orders"
product = "goods_id"
quantity = 1
status = "status"
live = [1]
released = []
reserving = []
order_id = "id"
user = "user_id"

[redis]
stock = "{prefix}:stock:${{id}}"

[inflight]
source = "rabbitmq"
url = "{url}"
queue = "{queue}"
product_field = "goods_id"
{management}
[repair]
rewrite = "delta"
"#,
            prefix = self.prefix,
            url = amqp_url(),
            queue = self.queue,
        )
    }

    /// Redis took a unit and the API died before publishing: a unit nobody holds (REDIS_LOW 1).
    pub async fn lose_one_after_redis(&self, product: i64) {
        let taken: i64 = redis::Script::new(TAKE_ONE)
            .key(stock_key(&self.prefix, product))
            .invoke_async(&mut self.redis.clone())
            .await
            .expect("Redis runs the script");
        assert_eq!(taken, 1, "a unit was left to lose");
    }

    /// What their API does when it restarts: every Redis counter set from `goods.stock`. With
    /// messages still queued, Redis ends higher than the DB by the queued ones once they are
    /// consumed (REDIS_HIGH).
    pub async fn restart_overwrites_redis(&self) {
        let rows: Vec<(i64, i64)> =
            sqlx::query_as("SELECT id, CAST(stock AS SIGNED) FROM goods").fetch_all(&self.db.pool).await.unwrap();
        let mut redis = self.redis.clone();
        for (id, stock) in rows {
            let _: () =
                redis::cmd("SET").arg(stock_key(&self.prefix, id)).arg(stock).query_async(&mut redis).await.unwrap();
        }
    }

    /// Locks the product's `goods` row in a transaction of its own and returns once it holds it.
    /// Release it within the server's `innodb_lock_wait_timeout` (50 s by default), or the
    /// consumer's `UPDATE` fails and it acknowledges the order lost (`release` says so).
    pub async fn lock_goods(&self, product: i64) -> GoodsLock {
        let mut conn = MySqlConnection::connect(&self.db.url).await.expect("a connection of the lock's own opens");
        let timeout: i64 = sqlx::query_scalar("SELECT CAST(@@GLOBAL.innodb_lock_wait_timeout AS SIGNED)")
            .fetch_one(&mut conn)
            .await
            .expect("the server says its lock wait timeout");
        conn.execute("BEGIN").await.expect("the lock's transaction begins");
        sqlx::query("SELECT stock FROM goods WHERE id = ? FOR UPDATE")
            .bind(product)
            .fetch_one(&mut conn)
            .await
            .expect("the product's goods row is locked");
        GoodsLock {
            conn,
            product,
            taken: Instant::now(),
            lock_wait_timeout: Duration::from_secs(timeout.unsigned_abs()),
        }
    }

    /// Messages the consumer acknowledged so far (orders written, failed or not orders at all).
    pub fn acknowledged(&self) -> i64 {
        self.acks.all.load(Ordering::SeqCst)
    }

    /// Orders whose transaction failed and that the consumer acknowledged all the same: lost,
    /// their units taken in Redis and in no row.
    pub fn failed_orders(&self) -> i64 {
        self.acks.failed.load(Ordering::SeqCst)
    }

    /// Stops the consumer between messages; messages published from now on wait in the queue.
    pub async fn pause_consumer(&self) {
        self.consumer.pause().await;
    }

    /// Starts consuming again.
    pub async fn resume_consumer(&self) {
        self.consumer.resume().await;
    }

    /// `goods.stock` of a product.
    pub async fn db_stock(&self, product: i64) -> i64 {
        self.db.scalar("SELECT CAST(stock AS SIGNED) FROM goods WHERE id = ?", product).await
    }

    /// The Redis counter of a product (None: the key is missing).
    pub async fn redis_stock(&self, product: i64) -> Option<i64> {
        redis_int(&mut self.redis.clone(), &stock_key(&self.prefix, product)).await
    }

    /// Done orders (status 1) of a product.
    pub async fn orders(&self, product: i64) -> i64 {
        self.db.scalar("SELECT COUNT(*) FROM orders WHERE goods_id = ? AND status = 1", product).await
    }

    /// Messages ready in the queue (not counting those the consumer was handed and holds
    /// unacknowledged: with no prefetch limit, every one it could take).
    pub async fn queue_depth(&self) -> u32 {
        let queue = self
            .publish
            .queue_declare(
                self.queue.as_str().into(),
                QueueDeclareOptions { passive: true, ..QueueDeclareOptions::default() },
                FieldTable::default(),
            )
            .await
            .expect("the order queue exists");
        queue.message_count()
    }

    /// Stops the consumer, deletes the queue, the keys and the database.
    pub async fn cleanup(&self) {
        self.consumer.stop().await;
        let _ = self.amqp.close(200, "sale over".into()).await;
        self.db.pool.close().await;
        self.leftovers.remove().await;
    }
}

impl Buy for FastapiRabbitSale {
    async fn buy(&self, user: i64, product: i64) -> Result<Answer, SaleError> {
        let taken: i64 = redis::Script::new(TAKE_ONE)
            .key(stock_key(&self.prefix, product))
            .invoke_async(&mut self.redis.clone())
            .await
            .map_err(rd("take a unit in Redis"))?;
        if taken == 0 {
            return Ok(Answer::SoldOut);
        }
        let body = serde_json::to_vec(&OrderMessage { user_id: user, goods_id: product })
            .map_err(|source| SaleError::Message { step: "write the order message", source })?;
        self.publish
            .basic_publish(
                "".into(),
                self.queue.as_str().into(),
                BasicPublishOptions::default(),
                &body,
                BasicProperties::default().with_delivery_mode(2),
            )
            .await
            .map_err(mq("publish the order"))?
            .await
            .map_err(mq("confirm the order's publication"))?;
        Ok(Answer::Accepted)
    }
}

impl GoodsLock {
    /// Ends the lock's transaction (the consumer's `UPDATE` goes on). Fails the test when the
    /// lock was held past the server's lock wait timeout: the consumer's waiting `UPDATE` failed
    /// then, and it acknowledged that order lost.
    pub async fn release(mut self) {
        let held = self.taken.elapsed();
        self.conn.execute("ROLLBACK").await.expect("the lock's transaction ends");
        self.conn.close().await.expect("the lock's connection closes");
        assert!(
            held < self.lock_wait_timeout,
            "product {}'s goods row was held locked {held:?}, past innodb_lock_wait_timeout ({:?}): the consumer's \
             UPDATE failed and it acknowledged the order lost; keep the lock shorter",
            self.product,
            self.lock_wait_timeout
        );
    }
}

/// Waits until RabbitMQ's statistics describe the new queue (its first `collect_statistics_interval`,
/// 5 s by default): until then the management API knows nothing of what it holds, and a reading
/// through the adapter file cannot be taken.
async fn described_by_statistics(queue: &str) {
    crate::support::waits::wait_for("RabbitMQ's statistics describe the queue", Duration::from_secs(30), async || {
        statistics(queue).await.get("messages_unacknowledged").is_some()
    })
    .await;
}

/// The management API's object for the queue (`{"error": ...}` while it knows none), in the
/// virtual host the AMQP URL names.
async fn statistics(queue: &str) -> serde_json::Value {
    let base = url::Url::parse(&management_url()).expect("the management URL is a URL");
    let amqp = url::Url::parse(&amqp_url()).expect("the AMQP URL is a URL");
    let vhost = Some(amqp.path().trim_start_matches('/')).filter(|v| !v.is_empty()).unwrap_or("%2F");
    let mut endpoint = base.clone();
    endpoint.set_username("").and_then(|()| endpoint.set_password(None)).expect("an http URL takes no user");
    let endpoint = format!("{}/api/queues/{vhost}/{queue}", endpoint.as_str().trim_end_matches('/'));
    let answer =
        reqwest::Client::new().get(&endpoint).basic_auth(base.username(), base.password()).send().await.unwrap_or_else(
            |e| panic!("the RabbitMQ management API answers at {endpoint}: {e}. `make test` enables it"),
        );
    assert_ne!(answer.status(), reqwest::StatusCode::UNAUTHORIZED, "the management API refused {}", base.username());
    answer.json().await.expect("the management API answers JSON")
}

fn stock_key(prefix: &str, product: i64) -> String {
    format!("{prefix}:stock:{product}")
}

/// Their consumer: no prefetch limit, so RabbitMQ hands it every message there is; it works
/// through them one at a time, each a transaction, then the ack. A pause cancels the
/// subscription and handles what was already delivered, so every later message waits ready in
/// the queue.
async fn consume(channel: Channel, queue: String, pool: MySqlPool, acks: Arc<Acks>, mut signals: ConsumerSignals) {
    let mut subscription = 0;
    while signals.go_on().await {
        subscription += 1;
        let tag = format!("{queue}.consumer.{subscription}");
        let mut deliveries = channel
            .basic_consume(
                queue.as_str().into(),
                tag.as_str().into(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await
            .expect("the consumer subscribes to the order queue");
        loop {
            tokio::select! {
                delivery = deliveries.next() => match delivery {
                    Some(delivery) => handle(&pool, &acks, delivery.expect("RabbitMQ delivers")).await,
                    None => break,
                },
                _ = signals.interrupted() => {
                    channel
                        .basic_cancel(tag.as_str().into(), BasicCancelOptions::default())
                        .await
                        .expect("the consumer unsubscribes");
                    // What RabbitMQ sent before the cancel: handled, then the stream ends.
                    while let Some(delivery) = deliveries.next().await {
                        handle(&pool, &acks, delivery.expect("RabbitMQ delivers")).await;
                    }
                    break;
                }
            }
        }
    }
}

/// One message, as theirs handles it: the order written (a deadlock tried again a few times),
/// then the ack, whatever became of the order. A failed order is not requeued: it is lost.
async fn handle(pool: &MySqlPool, acks: &Acks, delivery: lapin::message::Delivery) {
    let written = match serde_json::from_slice::<OrderMessage>(&delivery.data) {
        Ok(message) => write_with_retries(pool, &message).await,
        // Not an order: dropped, as their consumer does.
        Err(_) => true,
    };
    delivery.ack(BasicAckOptions::default()).await.expect("RabbitMQ takes the ack");
    if !written {
        acks.failed.fetch_add(1, Ordering::SeqCst);
    }
    acks.all.fetch_add(1, Ordering::SeqCst);
}

/// Writes the order, trying again only when InnoDB chose it as a deadlock's victim; false when
/// it was not written (their consumer logs it and moves on).
async fn write_with_retries(pool: &MySqlPool, message: &OrderMessage) -> bool {
    for _ in 0..DEADLOCK_TRIES {
        match write_order(pool, message).await {
            Ok(()) => return true,
            Err(e) if db_error_number(&e) == Some(1213) => continue,
            Err(_) => return false,
        }
    }
    false
}

async fn write_order(pool: &MySqlPool, message: &OrderMessage) -> Result<(), SaleError> {
    let mut tx = pool.begin().await.map_err(db("begin the order"))?;
    let taken = sqlx::query("UPDATE goods SET stock = stock - 1 WHERE id = ? AND stock >= 1")
        .bind(message.goods_id)
        .execute(&mut *tx)
        .await
        .map_err(db("take the unit from goods"))?
        .rows_affected();
    if taken == 1 {
        sqlx::query("INSERT INTO orders (user_id, goods_id, status) VALUES (?, ?, 1)")
            .bind(message.user_id)
            .bind(message.goods_id)
            .execute(&mut *tx)
            .await
            .map_err(db("insert the order"))?;
    }
    tx.commit().await.map_err(db("commit the order"))
}
