//! A sale that keeps no Redis (issue 49, item 7): its file names no `[redis]`, and the console
//! reads it with the database's URL alone; the review was asked for `STOCKGUARD_REDIS_URL`.

use crate::cli::stockguard;
use crate::sales::{sale_prefix, Leftovers, SaleDb};

#[tokio::test]
async fn a_sale_with_no_redis_is_read_with_its_database_url_alone() {
    let prefix = sale_prefix("noredis");
    let leftovers = Leftovers::new(&prefix, true, None);
    let db = SaleDb::create(
        &prefix,
        &[
            "CREATE TABLE goods (id BIGINT PRIMARY KEY, initial_stock INT NOT NULL, stock INT NOT NULL)",
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
    let select_only = db.select_only_url().await;
    let env = [
        ("STOCKGUARD_MYSQL_URL", select_only.as_str()),
        ("STOCKGUARD_ENVIRONMENT", "sandbox"),
        ("STOCKGUARD_ADAPTER", adapter.to_str().unwrap()),
    ];
    let recon = stockguard(&["recon", "--json"], &env);
    assert!(recon.status.success(), "{}", String::from_utf8_lossy(&recon.stderr));
    let readings: serde_json::Value = serde_json::from_slice(&recon.stdout).expect("recon --json prints JSON");
    let statuses: Vec<(u64, &str)> = readings
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["product_id"].as_u64().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert_eq!(statuses, [(1, "OK"), (2, "OK")], "{readings}");
    let check = stockguard(&["adapter", "check"], &env);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    db.pool.close().await;
    leftovers.remove().await;
}
