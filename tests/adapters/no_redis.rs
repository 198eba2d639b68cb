//! A sale that keeps no Redis (issue 49, item 7): its file names no `[redis]`, and the console
//! reads it with the database's URL alone; the review was asked for `STOCKGUARD_REDIS_URL`.
//! And figures no stock can hold (item 6): refused by name, never added up.

use crate::cli::stockguard;
use crate::sales::{sale_prefix, Leftovers, SaleDb};

/// A sale of two goods (10 units with 2 sold, and 5) whose file names no `[redis]`, and the
/// environment that reads it with a SELECT-only account alone.
struct DbOnly {
    db: SaleDb,
    leftovers: Leftovers,
    _dir: tempfile::TempDir,
    env: Vec<(&'static str, String)>,
}

async fn db_only_sale(tag: &str) -> DbOnly {
    let prefix = sale_prefix(tag);
    let leftovers = Leftovers::new(&prefix, true, None);
    let db = SaleDb::create(
        &prefix,
        &[
            "CREATE TABLE goods (id BIGINT PRIMARY KEY, initial_stock BIGINT NOT NULL, stock BIGINT NOT NULL)",
            "INSERT INTO goods VALUES (1, 10, 8), (2, 5, 5)",
            "CREATE TABLE orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, goods_id BIGINT NOT NULL, status INT NOT NULL)",
            "INSERT INTO orders (goods_id, status) VALUES (1, 1), (1, 1)",
        ],
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let adapter = dir.path().join("sale.toml");
    std::fs::write(
        &adapter,
        format!(
            r#"[sale]
name = "db-only-{prefix}"
[stock]
table = "goods"
product = "id"
remaining = "stock"
initial = "column:initial_stock"
[orders]
table = "orders"
product = "goods_id"
quantity = 1
status = "status"
live = [1]
[inflight]
source = "none"
"#
        ),
    )
    .unwrap();
    let env = vec![
        ("STOCKGUARD_MYSQL_URL", db.select_only_url().await),
        ("STOCKGUARD_ENVIRONMENT", "sandbox".into()),
        ("STOCKGUARD_ADAPTER", adapter.to_str().unwrap().into()),
    ];
    DbOnly { db, leftovers, _dir: dir, env }
}

impl DbOnly {
    fn run(&self, args: &[&str]) -> std::process::Output {
        let env: Vec<(&str, &str)> = self.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        stockguard(args, &env)
    }

    async fn remove(self) {
        self.db.pool.close().await;
        self.leftovers.remove().await;
    }
}

#[tokio::test]
async fn a_sale_with_no_redis_is_read_with_its_database_url_alone() {
    let sale = db_only_sale("noredis").await;
    let recon = sale.run(&["recon", "--json"]);
    assert!(recon.status.success(), "{}", String::from_utf8_lossy(&recon.stderr));
    let readings: serde_json::Value = serde_json::from_slice(&recon.stdout).expect("recon --json prints JSON");
    let statuses: Vec<(u64, &str)> = readings
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["product_id"].as_u64().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert_eq!(statuses, [(1, "OK"), (2, "OK")], "{readings}");
    let check = sale.run(&["adapter", "check"]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    sale.remove().await;
}

#[tokio::test]
async fn a_figure_no_stock_can_hold_is_refused_by_name_never_added_up() {
    let sale = db_only_sale("huge").await;
    // Added to the two live orders it would wrap into a small number (release) or panic (debug).
    sqlx::query("UPDATE goods SET stock = 9223372036854775807 WHERE id = 1").execute(&sale.db.pool).await.unwrap();
    let recon = sale.run(&["recon"]);
    let err = String::from_utf8_lossy(&recon.stderr);
    assert!(!recon.status.success(), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains(
            "product 1: goods.stock is 9223372036854775807, beyond any stock (1000000000000000 units at most)"
        ),
        "{err}"
    );
    sale.remove().await;
}
