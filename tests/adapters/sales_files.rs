//! The test sales' adapter files against the ones a user reads in `docs/adapters/`: the same
//! tables, fields and keys named (values differ: the tests' own prefixes, databases, queues),
//! and the SELECT-only account a team would hand Stockguard really cannot write.

use std::collections::BTreeSet;

use crate::sales::buckets::BucketSale;
use crate::sales::course_stream::CourseStreamSale;
use crate::sales::fastapi_rabbit::FastapiRabbitSale;
use crate::sales::go_counters::GoCountersSale;
use crate::sales::mall_lock::MallLockSale;
use crate::sales::miaosha_negative::MiaoshaSale;
use crate::sales::node_bullmq::NodeBullmqSale;
use crate::sales::request_table::RequestTableSale;

/// Every key path of a TOML document (`redis.buckets.table`, ...), values left out.
fn key_paths(text: &str) -> BTreeSet<String> {
    fn walk(prefix: &str, value: &toml::Value, out: &mut BTreeSet<String>) {
        if let toml::Value::Table(table) = value {
            for (key, value) in table {
                let path = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
                out.insert(path.clone());
                walk(&path, value, out);
            }
        }
    }
    let value: toml::Value = toml::from_str(text).unwrap_or_else(|e| panic!("an adapter file is TOML: {e}\n{text}"));
    let mut out = BTreeSet::new();
    walk("", &value, &mut out);
    out
}

fn docs_file(shape: &str) -> String {
    let path = format!("{}/docs/adapters/{shape}.toml", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn assert_same_keys(shape: &str, test_sale: &str) {
    assert_eq!(
        key_paths(test_sale),
        key_paths(&docs_file(shape)),
        "docs/adapters/{shape}.toml names what the test sale's file names"
    );
}

#[tokio::test]
async fn each_test_sale_names_what_its_docs_adapter_file_names() {
    let fastapi = FastapiRabbitSale::start(&[(1, 1)]).await;
    assert_same_keys("fastapi_rabbit", &fastapi.adapter_toml());
    fastapi.cleanup().await;
    let course = CourseStreamSale::start(&[(1, 1)]).await;
    assert_same_keys("course_stream", &course.adapter_toml());
    course.cleanup().await;
    let mall = MallLockSale::start(&[(1, 1)]).await;
    assert_same_keys("mall_lock", &mall.adapter_toml());
    mall.cleanup().await;
    let buckets = BucketSale::start(&[(1, 4)], 2).await;
    assert_same_keys("buckets", &buckets.adapter_toml());
    buckets.cleanup().await;
    let miaosha = MiaoshaSale::start(&[(1, 1)]).await;
    assert_same_keys("miaosha_negative", &miaosha.adapter_toml());
    miaosha.cleanup().await;
    let go = GoCountersSale::start(&[(1, 1), (2, 1), (3, 1)]).await;
    assert_same_keys("go_counters", &go.adapter_toml());
    go.cleanup().await;
    let bullmq = NodeBullmqSale::start(&[(1, 1)]).await;
    assert_same_keys("node_bullmq", &bullmq.adapter_toml());
    bullmq.cleanup().await;
    let requests = RequestTableSale::start(&[(1, 1)]).await;
    assert_same_keys("request_table", &requests.adapter_toml());
    requests.cleanup().await;
}

#[tokio::test]
async fn the_select_only_account_reads_the_sale_and_cannot_change_it() {
    let sale = MallLockSale::start(&[(1, 10)]).await;
    let tables = sale.db.tables().await;
    assert_eq!(tables, ["oms_order", "oms_order_item", "pms_sku_stock"]);
    let reader = sqlx::MySqlPool::connect(&sale.db.select_only_url().await).await.expect("the account connects");
    let stock: i32 =
        sqlx::query_scalar("SELECT stock FROM pms_sku_stock WHERE id = 1").fetch_one(&reader).await.unwrap();
    assert_eq!(stock, 10);
    for statement in ["UPDATE pms_sku_stock SET stock = 0", "CREATE TABLE sg_state (id INT)", "DROP TABLE oms_order"] {
        let refused = sqlx::query(statement).execute(&reader).await.expect_err(statement);
        let code = refused.as_database_error().and_then(|e| e.code()).map(|c| c.to_string());
        assert_eq!(code.as_deref(), Some("42000"), "{statement} is refused for lack of a grant: {refused}");
    }
    assert_eq!(sale.db.tables().await, tables);
    assert_eq!(sale.db_stock(1).await, 10);
    reader.close().await;
    sale.cleanup().await;
}
