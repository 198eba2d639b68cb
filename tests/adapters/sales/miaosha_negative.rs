//! A sale shaped like a popular Java "miaosha" sale whose Redis counter goes below zero: the
//! units left in `miaosha_goods.stock_count`, the sale's orders in `miaosha_order` (one per
//! user and goods, pointing at `order_info`, which holds the status: 0 new, 1 paid, 2 shipped,
//! 3 received, 4 refunded, 5 done), and a plain counter `GoodsKey:gs<id>`.
//!
//! Front half (`buy`, synchronous): a buyer who already ordered is refused; otherwise a plain
//! `DECR`, and a result below zero is a "sold out" with no `INCR` back, so every rejected try
//! pushes the counter further down. Then one transaction takes the unit from `stock_count`
//! and writes `order_info` and `miaosha_order`. The negative counter is the sale working as
//! designed, not drift.

use super::{db, rd, redis_conn, redis_int, sale_prefix, Answer, Buy, Leftovers, SaleDb, SaleError};

const DDL: &[&str] = &[
    "CREATE TABLE miaosha_goods (
        id BIGINT AUTO_INCREMENT PRIMARY KEY,
        goods_id BIGINT NOT NULL,
        stock_count INT NOT NULL,
        UNIQUE KEY uk_goods (goods_id)
    ) ENGINE=InnoDB",
    "CREATE TABLE order_info (
        id BIGINT AUTO_INCREMENT PRIMARY KEY,
        user_id BIGINT NOT NULL,
        goods_id BIGINT NOT NULL,
        goods_count INT NOT NULL,
        status TINYINT NOT NULL DEFAULT 0,
        create_date DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
    ) ENGINE=InnoDB",
    "CREATE TABLE miaosha_order (
        id BIGINT AUTO_INCREMENT PRIMARY KEY,
        user_id BIGINT NOT NULL,
        goods_id BIGINT NOT NULL,
        order_id BIGINT NOT NULL,
        UNIQUE KEY uk_user_goods (user_id, goods_id)
    ) ENGINE=InnoDB",
];

/// The miaosha-shaped sale.
pub struct MiaoshaSale {
    pub prefix: String,
    pub db: SaleDb,
    redis: redis::aio::MultiplexedConnection,
    leftovers: Leftovers,
}

impl MiaoshaSale {
    /// Creates the sale with `goods` as `(id, stock)` in the DB and Redis.
    pub async fn start(goods: &[(i64, i64)]) -> Self {
        let prefix = sale_prefix("mn");
        let leftovers = Leftovers::new(&prefix, true, None);
        let db = SaleDb::create(&prefix, DDL).await;
        let mut redis = redis_conn().await;
        for &(id, stock) in goods {
            sqlx::query("INSERT INTO miaosha_goods (goods_id, stock_count) VALUES (?, ?)")
                .bind(id)
                .bind(stock)
                .execute(&db.pool)
                .await
                .expect("the goods are seeded");
            let _: () = redis::cmd("SET").arg(stock_key(&prefix, id)).arg(stock).query_async(&mut redis).await.unwrap();
        }
        Self { prefix, db, redis, leftovers }
    }

    /// The adapter file a user would write for this sale, with this sale's database and keys.
    pub fn adapter_toml(&self) -> String {
        format!(
            r#"[sale]
name = "miaosha-{prefix}"

[stock]
table = "miaosha_goods"
product = "goods_id"
remaining = "stock_count"
initial = "baseline"

[orders]
table = "miaosha_order"
product = "goods_id"
quantity = 1
status = "status"
live = [0, 1, 2, 3, 5]
released = [4]
reserving = []
order_id = "order_id"
created = "create_date"
user = "user_id"
join = {{ table = "order_info", on = "order_id", key = "id" }}

[redis]
stock = "{prefix}:GoodsKey:gs${{id}}"
negative = "clamp"

[inflight]
source = "none"

[repair]
rewrite = "off"
"#,
            prefix = self.prefix,
        )
    }

    /// `n` buyers who never bought before try after the goods sold out (users from
    /// `first_user`): each pushes the counter one further below zero, none gets a unit.
    pub async fn rejected_tries(&self, goods: i64, first_user: i64, n: i64) {
        for user in first_user..first_user + n {
            let answer = self.buy(user, goods).await.expect("the order path answers");
            assert_eq!(answer, Answer::SoldOut, "the goods sold out before the rejected tries");
        }
    }

    /// `miaosha_goods.stock_count`.
    pub async fn db_stock(&self, goods: i64) -> i64 {
        self.db.scalar("SELECT CAST(stock_count AS SIGNED) FROM miaosha_goods WHERE goods_id = ?", goods).await
    }

    /// The Redis counter, negative as it is.
    pub async fn redis_stock(&self, goods: i64) -> Option<i64> {
        redis_int(&mut self.redis.clone(), &stock_key(&self.prefix, goods)).await
    }

    /// The goods' orders (every `miaosha_order` row; none is refunded in these tests).
    pub async fn orders(&self, goods: i64) -> i64 {
        self.db.scalar("SELECT COUNT(*) FROM miaosha_order WHERE goods_id = ?", goods).await
    }

    /// Deletes the keys and the database.
    pub async fn cleanup(&self) {
        self.db.pool.close().await;
        self.leftovers.remove().await;
    }

    async fn write_order(&self, user: i64, goods: i64) -> Result<bool, SaleError> {
        let mut tx = self.db.pool.begin().await.map_err(db("begin the order"))?;
        let taken = sqlx::query(
            "UPDATE miaosha_goods SET stock_count = stock_count - 1 WHERE goods_id = ? AND stock_count > 0",
        )
        .bind(goods)
        .execute(&mut *tx)
        .await
        .map_err(db("take the unit from miaosha_goods"))?
        .rows_affected();
        if taken == 0 {
            tx.rollback().await.map_err(db("roll back the order"))?;
            return Ok(false);
        }
        let order = sqlx::query("INSERT INTO order_info (user_id, goods_id, goods_count, status) VALUES (?, ?, 1, 0)")
            .bind(user)
            .bind(goods)
            .execute(&mut *tx)
            .await
            .map_err(db("insert order_info"))?
            .last_insert_id();
        sqlx::query("INSERT INTO miaosha_order (user_id, goods_id, order_id) VALUES (?, ?, ?)")
            .bind(user)
            .bind(goods)
            .bind(order)
            .execute(&mut *tx)
            .await
            .map_err(db("insert miaosha_order"))?;
        tx.commit().await.map_err(db("commit the order"))?;
        Ok(true)
    }
}

impl Buy for MiaoshaSale {
    async fn buy(&self, user: i64, goods: i64) -> Result<Answer, SaleError> {
        let ordered: Option<i64> =
            sqlx::query_scalar("SELECT id FROM miaosha_order WHERE user_id = ? AND goods_id = ?")
                .bind(user)
                .bind(goods)
                .fetch_optional(&self.db.pool)
                .await
                .map_err(db("look for the buyer's order"))?;
        if ordered.is_some() {
            return Ok(Answer::Refused);
        }
        let left: i64 = redis::cmd("DECR")
            .arg(stock_key(&self.prefix, goods))
            .query_async(&mut self.redis.clone())
            .await
            .map_err(rd("decrement the goods counter"))?;
        if left < 0 {
            return Ok(Answer::SoldOut);
        }
        Ok(if self.write_order(user, goods).await? { Answer::Accepted } else { Answer::SoldOut })
    }
}

fn stock_key(prefix: &str, goods: i64) -> String {
    format!("{prefix}:GoodsKey:gs{goods}")
}
