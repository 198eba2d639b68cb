//! One stock key that holds what is not a whole number (issue 49, item 3): the review's
//! `SET stock:2 abc` blinded the whole sale ("cannot read the stock keys: ... Could not convert
//! from string", no key named). That product reads as its own problem, `KEY_UNREADABLE`, naming
//! the key and the value; the others read; its alert fires; nothing is written anywhere.

use std::sync::Arc;
use std::time::Duration;

use sqlx::MySqlPool;

use crate::cli::{adapter_env, stockguard};
use crate::sales::course_stream::CourseStreamSale;
use crate::sales::Traffic;
use crate::support::waits::wait_for;

#[sqlx::test(migrations = false)]
async fn a_stock_key_holding_no_whole_number_is_its_products_problem_named_and_the_others_read(state: MySqlPool) {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 20), (2, 20)]).await);
    Traffic::buyers(6).on(&[1, 2]).run(&sale).await;
    wait_for("the consumer drains the stream", Duration::from_secs(30), async || sale.stream_backlog().await == 0)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let owned = adapter_env(&sale, dir.path(), &state).await;
    let env: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert!(stockguard(&["adapter", "baseline", "--reason", "sale opens"], &env).status.success());
    let key = sale.garble_key(2, "abc").await;
    let tables = sale.db.tables().await;

    let recon = stockguard(&["recon", "--json"], &env);
    assert!(recon.status.success(), "{}", String::from_utf8_lossy(&recon.stderr));
    let readings: serde_json::Value = serde_json::from_slice(&recon.stdout).expect("recon --json prints JSON");
    let by_id = |id: u64| readings.as_array().unwrap().iter().find(|r| r["product_id"] == id).cloned().unwrap();
    assert_eq!(by_id(1)["status"], "OK", "the other product reads: {readings}");
    assert_eq!(by_id(2)["status"], "KEY_UNREADABLE", "{readings}");
    assert_eq!(by_id(2)["unreadable"], serde_json::json!({ "key": key, "value": "abc" }));

    let text = stockguard(&["recon"], &env);
    let out = String::from_utf8_lossy(&text.stdout);
    let said: Vec<&str> = out.lines().filter(|l| l.contains("KEY_UNREADABLE:")).collect();
    assert_eq!(said, [format!("product 2: KEY_UNREADABLE: {key} holds \"abc\", not a whole number of units (at most 10^15); the sale cannot sell it from Redis (rewrite the key from the DB)")], "{out}");

    let alerts = stockguard(&["alerts", "--json"], &env);
    let fired: serde_json::Value = serde_json::from_slice(&alerts.stdout).expect("alerts --json prints JSON");
    let keys: Vec<&str> = fired.as_array().unwrap().iter().filter_map(|a| a["alert"]["key"].as_str()).collect();
    assert!(keys.contains(&"key_missing:2"), "{fired}");

    // A whole number no stock can be (the review's huge figures wrapped or panicked): the same.
    sale.garble_key(2, "9223372036854775807").await;
    let recon = stockguard(&["recon", "--json"], &env);
    let readings: serde_json::Value = serde_json::from_slice(&recon.stdout).expect("recon --json prints JSON");
    let huge = readings.as_array().unwrap().iter().find(|r| r["product_id"] == 2).cloned().unwrap();
    assert_eq!(huge["status"], "KEY_UNREADABLE", "{readings}");
    assert_eq!(huge["unreadable"]["value"], "9223372036854775807");

    assert_eq!(sale.db.tables().await, tables, "nothing written in the sale's database");
    let raw: String = redis::cmd("GET").arg(&key).query_async(&mut crate::sales::redis_conn().await).await.unwrap();
    assert_eq!(raw, "9223372036854775807", "nor in its Redis");
    sale.cleanup().await;
}
