//! A sale whose product ids are strings (`VARCHAR` keys such as `'SKU-A'`): not read yet, and
//! said in one line rather than read wrong (issue 47: every such product read as product 0,
//! three rows with wrong figures, and baselines written for them).

use std::collections::HashMap;
use std::path::Path;

use stockguard_core::adapter::{self, AdapterError, AdapterFile, SaleLinks};

use crate::sales::{redis_conn, sale_prefix, Leftovers, SaleDb};

#[tokio::test]
async fn a_sale_whose_product_ids_are_strings_is_refused_in_one_line_naming_the_column_and_an_id() {
    let prefix = sale_prefix("sku");
    let leftovers = Leftovers::new(&prefix, true, None);
    let db = SaleDb::create(
        &prefix,
        &[
            "CREATE TABLE goods (sku VARCHAR(32) PRIMARY KEY, stock INT NOT NULL)",
            "INSERT INTO goods VALUES ('SKU-A', 10), ('SKU-B', 20), ('SKU-C', 30)",
            "CREATE TABLE orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, sku VARCHAR(32) NOT NULL, status INT NOT NULL)",
        ],
    )
    .await;
    let file = AdapterFile::parse(
        &format!(
            r#"[sale]
name = "skus-{prefix}"
[stock]
table = "goods"
product = "sku"
remaining = "stock"
initial = "baseline"
[orders]
table = "orders"
product = "sku"
quantity = 1
status = "status"
live = [1]
[redis]
stock = "{prefix}:stock:${{id}}"
"#
        ),
        Path::new("skus.toml"),
    )
    .expect("the file parses");
    let redis = redis_conn().await;
    let links = SaleLinks { db: Some(&db.pool), redis: Some(&redis) };
    let err = adapter::read(&file, &links, &HashMap::new(), &[]).await.expect_err("string ids are not read as numbers");
    assert!(matches!(err, AdapterError::Refused(_)), "{err:?}");
    let said = err.to_string();
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.contains("goods.sku holds the product id \"SKU-A\", not a whole number"), "{said}");
    db.pool.close().await;
    leftovers.remove().await;
}
