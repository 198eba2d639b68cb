//! A stream field the adapter file spells in the wrong case (issue 49, item 7): `adapter check`
//! passed `product_field = "VoucherId"` over entries that carry `voucherId`, and every entry then
//! read as naming no product. Redis field names are case-sensitive: check says so in one line.

use std::sync::Arc;
use std::time::Duration;

use sqlx::MySqlPool;

use crate::cli::{adapter_env, stockguard};
use crate::sales::course_stream::CourseStreamSale;
use crate::sales::Traffic;
use crate::support::waits::wait_for;

#[sqlx::test(migrations = false)]
async fn check_refuses_a_stream_field_spelled_in_another_case_naming_the_one_the_entries_carry(state: MySqlPool) {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 20)]).await);
    Traffic::buyers(4).on(&[1]).run(&sale).await;
    wait_for("the consumer drains the stream", Duration::from_secs(30), async || sale.stream_backlog().await == 0)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let owned = adapter_env(&sale, dir.path(), &state).await;
    let env: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert!(stockguard(&["adapter", "check"], &env).status.success(), "the file as written checks");

    let adapter = dir.path().join("sale.toml");
    let right = std::fs::read_to_string(&adapter).unwrap();
    for (wrong, said) in [
        (
            right.replace("product_field = \"voucherId\"", "product_field = \"VoucherId\""),
            "entries carry voucherId, not VoucherId ([inflight] product_field; field names are case-sensitive)",
        ),
        (
            right.replace("order_id_field = \"id\"", "order_id_field = \"orderId\""),
            "carry no field orderId ([inflight] order_id_field); they carry",
        ),
    ] {
        std::fs::write(&adapter, wrong).unwrap();
        let check = stockguard(&["adapter", "check"], &env);
        let err = String::from_utf8_lossy(&check.stderr);
        assert!(!check.status.success(), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains(said), "{said:?} in {err}");
    }
    sale.cleanup().await;
}
