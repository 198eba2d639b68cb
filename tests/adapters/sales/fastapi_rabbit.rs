//! A sale shaped like a public Python/FastAPI flash sale: only the units left are stored
//! (`goods.stock`, no initial stock), one unit per order (`orders`, status 1 = done), a Redis
//! string counter per product taken by a Lua script, and a durable RabbitMQ queue of
//! `{user_id, goods_id}` messages (no order id) that a consumer turns into rows.
//!
//! Front half (`buy`): the Lua script checks `stock:<id>` >= 1 and decrements it, then the API
//! publishes the message (with a publisher confirm) and answers "accepted". Back half (the
//! consumer): in one transaction `UPDATE goods ... WHERE stock >= 1` and the order row, then the
//! ack. Its faults: a message lost after Redis took the unit, a restart that overwrites Redis
//! from the DB while messages wait, and a paused consumer.

use futures_util::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicCancelOptions, BasicConsumeOptions, BasicNackOptions, BasicPublishOptions, BasicQosOptions,
    ConfirmSelectOptions, QueueDeclareOptions,
};
use lapin::types::FieldTable;
use lapin::{BasicProperties, Channel};
use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

use super::control::{ConsumerHandle, ConsumerSignals};
use super::{amqp_connection, amqp_url, db, mq, rd, redis_conn, redis_int, sale_prefix, Leftovers};
use super::{Answer, Buy, SaleDb, SaleError};

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
    leftovers: Leftovers,
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
        let channel = amqp.create_channel().await.expect("the consumer's channel opens");
        channel.basic_qos(1, BasicQosOptions::default()).await.expect("the consumer takes one message at a time");
        let (pool, q) = (db.pool.clone(), queue.clone());
        let consumer = ConsumerHandle::spawn(move |signals| consume(channel, q, pool, signals));
        Self { prefix, db, queue, redis, amqp, publish, consumer, leftovers }
    }

    /// The adapter file a user would write for this sale, with this sale's database, keys and queue.
    pub fn adapter_toml(&self) -> String {
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

    /// Messages ready in the queue (not counting one the consumer holds unacknowledged).
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

fn stock_key(prefix: &str, product: i64) -> String {
    format!("{prefix}:stock:{product}")
}

/// Their consumer: one message at a time, each a transaction, then the ack. A pause cancels the
/// subscription and handles what was already delivered, so every later message waits ready in
/// the queue.
async fn consume(channel: Channel, queue: String, pool: MySqlPool, mut signals: ConsumerSignals) {
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
                    Some(delivery) => handle(&pool, delivery.expect("RabbitMQ delivers")).await,
                    None => break,
                },
                _ = signals.interrupted() => {
                    channel
                        .basic_cancel(tag.as_str().into(), BasicCancelOptions::default())
                        .await
                        .expect("the consumer unsubscribes");
                    // What RabbitMQ sent before the cancel: handled, then the stream ends.
                    while let Some(delivery) = deliveries.next().await {
                        handle(&pool, delivery.expect("RabbitMQ delivers")).await;
                    }
                    break;
                }
            }
        }
    }
}

async fn handle(pool: &MySqlPool, delivery: lapin::message::Delivery) {
    let message: OrderMessage = match serde_json::from_slice(&delivery.data) {
        Ok(message) => message,
        Err(_) => {
            // Not an order: dropped, as their consumer does.
            delivery.ack(BasicAckOptions::default()).await.expect("RabbitMQ takes the ack");
            return;
        }
    };
    for _ in 0..10 {
        match write_order(pool, &message).await {
            Ok(()) => {
                delivery.ack(BasicAckOptions::default()).await.expect("RabbitMQ takes the ack");
                return;
            }
            Err(e) if super::is_retryable(&e) => continue,
            Err(_) => break,
        }
    }
    delivery
        .nack(BasicNackOptions { requeue: true, ..BasicNackOptions::default() })
        .await
        .expect("RabbitMQ takes the nack");
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
