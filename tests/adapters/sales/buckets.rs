//! A sale shaped like a public Java flash sale with stock buckets: `flash_item` keeps both the
//! initial and the available stock, the units are split into buckets (a DB row per bucket in
//! `flash_bucket`, a Redis key per bucket `flash_stock_<id>_<n>` and a key with the bucket
//! count), so that buyers spread over several hot keys.
//!
//! Front half (`buy`, synchronous, no queue): the buyer's bucket is `user % count`; a Lua
//! script takes one unit from it, or from the next bucket that has one; then one transaction
//! takes the unit from that bucket's row and from `flash_item.available_stock` and writes the
//! order (`flash_order`, status 1 placed, 2 paid, 3 cancelled). When the DB refuses, the unit
//! goes back to the Redis bucket. Fault: one bucket up and another down by the same amount
//! (the total looks right).

use super::{db, rd, redis_conn, redis_int, sale_prefix, Answer, Buy, Leftovers, SaleDb, SaleError};

const DDL: &[&str] = &[
    "CREATE TABLE flash_item (
        id BIGINT PRIMARY KEY,
        item_title VARCHAR(128) NOT NULL,
        initial_stock INT NOT NULL,
        available_stock INT NOT NULL
    ) ENGINE=InnoDB",
    "CREATE TABLE flash_bucket (
        id BIGINT AUTO_INCREMENT PRIMARY KEY,
        item_id BIGINT NOT NULL,
        serial_no INT NOT NULL,
        total_stocks_amount INT NOT NULL,
        available_stocks_amount INT NOT NULL,
        UNIQUE KEY uk_bucket (item_id, serial_no)
    ) ENGINE=InnoDB",
    "CREATE TABLE flash_order (
        id BIGINT AUTO_INCREMENT PRIMARY KEY,
        item_id BIGINT NOT NULL,
        user_id BIGINT NOT NULL,
        status TINYINT NOT NULL DEFAULT 1,
        quantity INT NOT NULL DEFAULT 1,
        create_time DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
        KEY idx_item (item_id)
    ) ENGINE=InnoDB",
];

/// Takes one unit from the first bucket in KEYS that has one: its position in KEYS, or -1.
const TAKE_FROM_BUCKETS: &str = r"
for i = 1, #KEYS do
  local stock = tonumber(redis.call('GET', KEYS[i]) or '0')
  if stock > 0 then
    redis.call('DECR', KEYS[i])
    return i - 1
  end
end
return -1";

/// The bucketed sale.
pub struct BucketSale {
    pub prefix: String,
    pub db: SaleDb,
    redis: redis::aio::MultiplexedConnection,
    leftovers: Leftovers,
}

impl BucketSale {
    /// Creates the sale with `items` as `(id, stock)`, each split over `buckets` buckets (the
    /// first ones one unit larger when it does not divide).
    pub async fn start(items: &[(i64, i64)], buckets: i64) -> Self {
        let prefix = sale_prefix("bk");
        let leftovers = Leftovers::new(&prefix, true, None);
        let db = SaleDb::create(&prefix, DDL).await;
        let mut redis = redis_conn().await;
        for &(id, stock) in items {
            sqlx::query("INSERT INTO flash_item (id, item_title, initial_stock, available_stock) VALUES (?, ?, ?, ?)")
                .bind(id)
                .bind(format!("item {id}"))
                .bind(stock)
                .bind(stock)
                .execute(&db.pool)
                .await
                .expect("the items are seeded");
            for n in 0..buckets {
                let size = stock / buckets + i64::from(n < stock % buckets);
                sqlx::query(
                    "INSERT INTO flash_bucket (item_id, serial_no, total_stocks_amount, available_stocks_amount) \
                     VALUES (?, ?, ?, ?)",
                )
                .bind(id)
                .bind(n)
                .bind(size)
                .bind(size)
                .execute(&db.pool)
                .await
                .expect("the buckets are seeded");
                let _: () =
                    redis::cmd("SET").arg(bucket_key(&prefix, id, n)).arg(size).query_async(&mut redis).await.unwrap();
            }
            let _: () =
                redis::cmd("SET").arg(count_key(&prefix, id)).arg(buckets).query_async(&mut redis).await.unwrap();
        }
        Self { prefix, db, redis, leftovers }
    }

    /// The adapter file a user would write for this sale, with its per-bucket table.
    pub fn adapter_toml(&self) -> String {
        self.adapter_with_buckets(
            r#", table = "flash_bucket", product = "item_id", bucket = "serial_no", available = "available_stocks_amount""#,
        )
    }

    /// The adapter file without the per-bucket table (only the Redis buckets and the item's totals).
    pub fn adapter_toml_totals_only(&self) -> String {
        self.adapter_with_buckets("")
    }

    fn adapter_with_buckets(&self, bucket_table: &str) -> String {
        format!(
            r#"[sale]
name = "buckets-{prefix}"

[stock]
table = "flash_item"
product = "id"
remaining = "available_stock"
initial = "column:initial_stock"
name = "item_title"

[orders]
table = "flash_order"
product = "item_id"
quantity_column = "quantity"
status = "status"
live = [1, 2]
released = [3]
reserving = []
order_id = "id"
created = "create_time"
user = "user_id"

[redis]
buckets = {{ key = "{prefix}:flash_stock_${{id}}_${{n}}", count = "{prefix}:flash_bucket_count_${{id}}"{bucket_table} }}

[inflight]
source = "none"

[repair]
rewrite = "off"
"#,
            prefix = self.prefix,
        )
    }

    /// Bucket `n` of the item up by `delta` and the next bucket down by as much.
    pub async fn drift_bucket(&self, item: i64, n: i64, delta: i64) {
        let count = self.bucket_count(item).await;
        let mut redis = self.redis.clone();
        let _: () = redis::pipe()
            .atomic()
            .cmd("INCRBY")
            .arg(bucket_key(&self.prefix, item, n))
            .arg(delta)
            .ignore()
            .cmd("DECRBY")
            .arg(bucket_key(&self.prefix, item, (n + 1) % count))
            .arg(delta)
            .ignore()
            .query_async(&mut redis)
            .await
            .unwrap();
    }

    /// The item's bucket count, from Redis.
    pub async fn bucket_count(&self, item: i64) -> i64 {
        redis_int(&mut self.redis.clone(), &count_key(&self.prefix, item)).await.expect("the bucket count key exists")
    }

    /// `flash_item.available_stock`.
    pub async fn db_stock(&self, item: i64) -> i64 {
        self.db.scalar("SELECT CAST(available_stock AS SIGNED) FROM flash_item WHERE id = ?", item).await
    }

    /// `available_stocks_amount` of each bucket row, by serial number.
    pub async fn db_buckets(&self, item: i64) -> Vec<i64> {
        sqlx::query_scalar(
            "SELECT CAST(available_stocks_amount AS SIGNED) FROM flash_bucket WHERE item_id = ? ORDER BY serial_no",
        )
        .bind(item)
        .fetch_all(&self.db.pool)
        .await
        .unwrap()
    }

    /// Each Redis bucket (a missing one read as None).
    pub async fn redis_buckets(&self, item: i64) -> Vec<Option<i64>> {
        let mut redis = self.redis.clone();
        let mut buckets = Vec::new();
        for n in 0..self.bucket_count(item).await {
            buckets.push(redis_int(&mut redis, &bucket_key(&self.prefix, item, n)).await);
        }
        buckets
    }

    /// The sum of the Redis buckets.
    pub async fn redis_stock(&self, item: i64) -> i64 {
        self.redis_buckets(item).await.into_iter().map(|b| b.unwrap_or(0)).sum()
    }

    /// Units of live orders (placed or paid).
    pub async fn orders(&self, item: i64) -> i64 {
        self.db
            .scalar("SELECT CAST(COALESCE(SUM(quantity), 0) AS SIGNED) FROM flash_order WHERE item_id = ? AND status IN (1, 2)", item)
            .await
    }

    /// Deletes the keys and the database.
    pub async fn cleanup(&self) {
        self.db.pool.close().await;
        self.leftovers.remove().await;
    }

    async fn write_order(&self, user: i64, item: i64, bucket: i64) -> Result<bool, SaleError> {
        let mut tx = self.db.pool.begin().await.map_err(db("begin the order"))?;
        let from_bucket = sqlx::query(
            "UPDATE flash_bucket SET available_stocks_amount = available_stocks_amount - 1 \
             WHERE item_id = ? AND serial_no = ? AND available_stocks_amount > 0",
        )
        .bind(item)
        .bind(bucket)
        .execute(&mut *tx)
        .await
        .map_err(db("take the unit from the bucket row"))?
        .rows_affected();
        let from_item = sqlx::query(
            "UPDATE flash_item SET available_stock = available_stock - 1 WHERE id = ? AND available_stock > 0",
        )
        .bind(item)
        .execute(&mut *tx)
        .await
        .map_err(db("take the unit from the item"))?
        .rows_affected();
        if from_bucket == 0 || from_item == 0 {
            tx.rollback().await.map_err(db("roll back the order"))?;
            return Ok(false);
        }
        sqlx::query("INSERT INTO flash_order (item_id, user_id, status, quantity) VALUES (?, ?, 1, 1)")
            .bind(item)
            .bind(user)
            .execute(&mut *tx)
            .await
            .map_err(db("insert the order"))?;
        tx.commit().await.map_err(db("commit the order"))?;
        Ok(true)
    }
}

impl Buy for BucketSale {
    async fn buy(&self, user: i64, item: i64) -> Result<Answer, SaleError> {
        let mut redis = self.redis.clone();
        let count: i64 = redis::cmd("GET")
            .arg(count_key(&self.prefix, item))
            .query_async::<Option<i64>>(&mut redis)
            .await
            .map_err(rd("read the bucket count"))?
            .unwrap_or(0);
        if count <= 0 {
            return Ok(Answer::SoldOut);
        }
        let first = user.rem_euclid(count);
        let script = redis::Script::new(TAKE_FROM_BUCKETS);
        let mut script = script.prepare_invoke();
        for i in 0..count {
            script.key(bucket_key(&self.prefix, item, (first + i) % count));
        }
        let taken: i64 = script.invoke_async(&mut redis).await.map_err(rd("take a unit from a bucket"))?;
        if taken < 0 {
            return Ok(Answer::SoldOut);
        }
        let bucket = (first + taken) % count;
        let written = self.write_order(user, item, bucket).await;
        if !matches!(written, Ok(true)) {
            // The DB did not take it: the unit goes back to its Redis bucket.
            let _: () = redis::cmd("INCR")
                .arg(bucket_key(&self.prefix, item, bucket))
                .query_async(&mut redis)
                .await
                .map_err(rd("give the unit back to its bucket"))?;
        }
        Ok(if written? { Answer::Accepted } else { Answer::SoldOut })
    }
}

fn bucket_key(prefix: &str, item: i64, n: i64) -> String {
    format!("{prefix}:flash_stock_{item}_{n}")
}

fn count_key(prefix: &str, item: i64) -> String {
    format!("{prefix}:flash_bucket_count_{item}")
}
