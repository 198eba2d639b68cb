//! A sale shaped like a popular Java mall's two-phase stock lock, with no Redis: an unpaid order
//! raises `pms_sku_stock.lock_stock`; payment takes the units from both `stock` and
//! `lock_stock`; closing an unpaid order gives back the lock. Quantities sit on
//! `oms_order_item`, statuses on the parent `oms_order` (0 unpaid, 1-3 paid/shipped/done,
//! 4 closed, 5 invalid).
//!
//! Front half (`buy`, or `place` with a quantity): one transaction locks the units when
//! `stock - lock_stock` covers them and writes the order and its item. No queue: nothing is in
//! flight. Fault: a lock raised with no order behind it (LEDGER_MISMATCH).

use super::{db, sale_prefix, Answer, Buy, Leftovers, SaleDb, SaleError};

const DDL: &[&str] = &[
    "CREATE TABLE pms_sku_stock (
        id BIGINT PRIMARY KEY,
        sku_code VARCHAR(64) NOT NULL,
        stock INT NOT NULL,
        lock_stock INT NOT NULL DEFAULT 0
    ) ENGINE=InnoDB",
    "CREATE TABLE oms_order (
        id BIGINT AUTO_INCREMENT PRIMARY KEY,
        member_id BIGINT NOT NULL,
        status INT NOT NULL DEFAULT 0,
        create_time DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
    ) ENGINE=InnoDB",
    "CREATE TABLE oms_order_item (
        id BIGINT AUTO_INCREMENT PRIMARY KEY,
        order_id BIGINT NOT NULL,
        product_sku_id BIGINT NOT NULL,
        product_quantity INT NOT NULL,
        KEY idx_order (order_id),
        KEY idx_sku (product_sku_id)
    ) ENGINE=InnoDB",
];

/// Order statuses of the mall.
pub mod status {
    pub const UNPAID: i64 = 0;
    pub const PAID: i64 = 1;
    pub const CLOSED: i64 = 4;
}

/// The mall-shaped sale.
pub struct MallLockSale {
    pub prefix: String,
    pub db: SaleDb,
    leftovers: Leftovers,
}

impl MallLockSale {
    /// Creates the sale with `skus` as `(id, stock)`, nothing locked.
    pub async fn start(skus: &[(i64, i64)]) -> Self {
        let prefix = sale_prefix("ml");
        let leftovers = Leftovers::new(&prefix, true, None);
        let db = SaleDb::create(&prefix, DDL).await;
        for &(id, stock) in skus {
            sqlx::query("INSERT INTO pms_sku_stock (id, sku_code, stock) VALUES (?, ?, ?)")
                .bind(id)
                .bind(format!("sku-{id}"))
                .bind(stock)
                .execute(&db.pool)
                .await
                .expect("the SKUs are seeded");
        }
        Self { prefix, db, leftovers }
    }

    /// The adapter file a user would write for this sale (no initial stock stored: a baseline).
    pub fn adapter_toml(&self) -> String {
        self.adapter_toml_with_initial("\"baseline\"")
    }

    /// The adapter file with `initial` as written (`"baseline"`, or a number for every SKU).
    pub fn adapter_toml_with_initial(&self, initial: &str) -> String {
        format!(
            r#"[sale]
name = "mall-lock-{prefix}"

[stock]
table = "pms_sku_stock"
product = "id"
remaining = "stock"
reserved = "lock_stock"
initial = {initial}
name = "sku_code"

[orders]
table = "oms_order_item"
product = "product_sku_id"
quantity_column = "product_quantity"
status = "status"
live = [0, 1, 2, 3]
released = [4, 5]
reserving = [0]
order_id = "order_id"
created = "create_time"
user = "member_id"
join = {{ table = "oms_order", on = "order_id", key = "id" }}

[inflight]
source = "none"

[repair]
rewrite = "off"
"#,
            prefix = self.prefix,
        )
    }

    /// Their order path: locks `quantity` units of `sku` and writes an unpaid order. The order
    /// id, or None when the free units do not cover it.
    pub async fn place(&self, member: i64, sku: i64, quantity: i64) -> Result<Option<i64>, SaleError> {
        let mut tx = self.db.pool.begin().await.map_err(db("begin the order"))?;
        let locked = sqlx::query(
            "UPDATE pms_sku_stock SET lock_stock = lock_stock + ? WHERE id = ? AND stock - lock_stock >= ?",
        )
        .bind(quantity)
        .bind(sku)
        .bind(quantity)
        .execute(&mut *tx)
        .await
        .map_err(db("lock the units"))?
        .rows_affected();
        if locked == 0 {
            tx.rollback().await.map_err(db("roll back the order"))?;
            return Ok(None);
        }
        let order = sqlx::query("INSERT INTO oms_order (member_id, status) VALUES (?, 0)")
            .bind(member)
            .execute(&mut *tx)
            .await
            .map_err(db("insert the order"))?
            .last_insert_id() as i64;
        sqlx::query("INSERT INTO oms_order_item (order_id, product_sku_id, product_quantity) VALUES (?, ?, ?)")
            .bind(order)
            .bind(sku)
            .bind(quantity)
            .execute(&mut *tx)
            .await
            .map_err(db("insert the order item"))?;
        tx.commit().await.map_err(db("commit the order"))?;
        Ok(Some(order))
    }

    /// Payment: the unpaid order becomes paid (1) and its units leave both `stock` and
    /// `lock_stock`. False when the order was not unpaid.
    pub async fn pay(&self, order: i64) -> Result<bool, SaleError> {
        self.settle(order, status::PAID).await
    }

    /// Closing an unpaid order (timeout, cancel): closed (4), its lock given back.
    pub async fn close(&self, order: i64) -> Result<bool, SaleError> {
        self.settle(order, status::CLOSED).await
    }

    /// An unpaid order to `to`: paid takes its units from `stock` and `lock_stock`, closed only
    /// from `lock_stock`.
    async fn settle(&self, order: i64, to: i64) -> Result<bool, SaleError> {
        let mut tx = self.db.pool.begin().await.map_err(db("begin the settlement"))?;
        let moved = sqlx::query("UPDATE oms_order SET status = ? WHERE id = ? AND status = 0")
            .bind(to)
            .bind(order)
            .execute(&mut *tx)
            .await
            .map_err(db("change the order's status"))?
            .rows_affected();
        if moved == 0 {
            tx.rollback().await.map_err(db("roll back the settlement"))?;
            return Ok(false);
        }
        let items: Vec<(i64, i64)> = sqlx::query_as(
            "SELECT product_sku_id, CAST(product_quantity AS SIGNED) FROM oms_order_item WHERE order_id = ?",
        )
        .bind(order)
        .fetch_all(&mut *tx)
        .await
        .map_err(db("read the order's items"))?;
        for (sku, quantity) in items {
            let shipped = if to == status::PAID { quantity } else { 0 };
            sqlx::query("UPDATE pms_sku_stock SET stock = stock - ?, lock_stock = lock_stock - ? WHERE id = ?")
                .bind(shipped)
                .bind(quantity)
                .bind(sku)
                .execute(&mut *tx)
                .await
                .map_err(db("move the units"))?;
        }
        tx.commit().await.map_err(db("commit the settlement"))?;
        Ok(true)
    }

    /// `lock_stock` raised by `quantity` with no order behind it (LEDGER_MISMATCH).
    pub async fn strand_lock(&self, sku: i64, quantity: i64) {
        sqlx::query("UPDATE pms_sku_stock SET lock_stock = lock_stock + ? WHERE id = ?")
            .bind(quantity)
            .bind(sku)
            .execute(&self.db.pool)
            .await
            .unwrap();
    }

    /// `pms_sku_stock.stock` (physical units, locked ones included).
    pub async fn db_stock(&self, sku: i64) -> i64 {
        self.db.scalar("SELECT CAST(stock AS SIGNED) FROM pms_sku_stock WHERE id = ?", sku).await
    }

    /// `pms_sku_stock.lock_stock`.
    pub async fn locked(&self, sku: i64) -> i64 {
        self.db.scalar("SELECT CAST(lock_stock AS SIGNED) FROM pms_sku_stock WHERE id = ?", sku).await
    }

    /// Units of the SKU's orders in a status.
    pub async fn units(&self, sku: i64, status: i64) -> i64 {
        sqlx::query_scalar(
            "SELECT CAST(COALESCE(SUM(i.product_quantity), 0) AS SIGNED) FROM oms_order_item i \
             JOIN oms_order o ON o.id = i.order_id WHERE i.product_sku_id = ? AND o.status = ?",
        )
        .bind(sku)
        .bind(status)
        .fetch_one(&self.db.pool)
        .await
        .unwrap()
    }

    /// The ids of the SKU's orders in a status, oldest first.
    pub async fn order_ids(&self, sku: i64, status: i64) -> Vec<i64> {
        sqlx::query_scalar(
            "SELECT o.id FROM oms_order o JOIN oms_order_item i ON i.order_id = o.id \
             WHERE i.product_sku_id = ? AND o.status = ? ORDER BY o.id",
        )
        .bind(sku)
        .bind(status)
        .fetch_all(&self.db.pool)
        .await
        .unwrap()
    }

    /// Drops the database.
    pub async fn cleanup(&self) {
        self.db.pool.close().await;
        self.leftovers.remove().await;
    }
}

impl Buy for MallLockSale {
    async fn buy(&self, member: i64, sku: i64) -> Result<Answer, SaleError> {
        Ok(match self.place(member, sku, 1).await? {
            Some(_) => Answer::Accepted,
            None => Answer::SoldOut,
        })
    }
}
