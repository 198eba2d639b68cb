//! A delta repair over a counter the sale clamps at zero (issue 49, item 5): the review's repair
//! added +3 to a counter at -7, changed nothing the sale reads, and said and audited "added +3
//! ... now -4". A repair moves what the sale reads by the drift, and says what it did, read back.

use std::sync::Arc;

use sqlx::MySqlPool;

use crate::cli::stockguard;
use crate::sales::miaosha_negative::MiaoshaSale;
use crate::sales::Traffic;

const G: i64 = 31;

#[sqlx::test(migrations = false)]
async fn a_delta_repair_over_a_clamped_counter_below_zero_moves_what_the_sale_reads_and_says_so(state: MySqlPool) {
    let sale = Arc::new(MiaoshaSale::start(&[(G, 10)]).await);
    Traffic::buyers(10).on(&[G]).run(&sale).await;
    assert_eq!(sale.orders(G).await, 10, "it sold out");
    sale.rejected_tries(G, 5000, 7).await;
    let raw = sale.redis_stock(G).await.expect("the counter is there");
    assert!(raw <= -7, "rejected tries took the counter below zero: {raw}");

    let dir = tempfile::tempdir().unwrap();
    let adapter = dir.path().join("sale.toml");
    std::fs::write(&adapter, sale.adapter_toml().replace("rewrite = \"off\"", "rewrite = \"delta\"")).unwrap();
    let (select_only, redis, state_url) =
        (sale.db.select_only_url().await, crate::support::redis_url(), crate::support::mysql_url_of(&state).await);
    let env = [
        ("STOCKGUARD_MYSQL_URL", select_only.as_str()),
        ("STOCKGUARD_REDIS_URL", redis.as_str()),
        ("STOCKGUARD_ENVIRONMENT", "sandbox"),
        ("STOCKGUARD_ADAPTER", adapter.to_str().unwrap()),
        ("STOCKGUARD_STATE_URL", state_url.as_str()),
    ];
    assert!(stockguard(&["adapter", "baseline", "--reason", "the sale opens"], &env).status.success());

    // Three orders cancelled in the DB, their units back in its stock and not in Redis: the
    // sale reads 0 in Redis (clamped) and 3 in the DB, REDIS_LOW by 3.
    let released: Vec<i64> =
        sqlx::query_scalar("SELECT order_id FROM miaosha_order WHERE goods_id = ? ORDER BY order_id LIMIT 3")
            .bind(G)
            .fetch_all(&sale.db.pool)
            .await
            .unwrap();
    for id in released {
        sqlx::query("UPDATE order_info SET status = 4 WHERE id = ?").bind(id).execute(&sale.db.pool).await.unwrap();
    }
    sqlx::query("UPDATE miaosha_goods SET stock_count = stock_count + 3 WHERE goods_id = ?")
        .bind(G)
        .execute(&sale.db.pool)
        .await
        .unwrap();

    let done = stockguard(
        &["adapter", "repair", "--product", &G.to_string(), "--expect-drift", "-3", "--reason", "units back in the DB"],
        &env,
    );
    let out = String::from_utf8_lossy(&done.stdout);
    assert!(done.status.success(), "{out}{}", String::from_utf8_lossy(&done.stderr));
    assert!(out.contains(&format!("product {G}: the sale reads 3 in")), "{out}");
    assert!(out.contains("0 before (+3)"), "{out}");
    assert!(out.contains(&format!("(the counter was below zero: {:+} to it, now 3)", 3 - raw)), "{out}");
    assert!(out.contains("drift now 0 (read back, audited)"), "{out}");
    assert_eq!(sale.redis_stock(G).await, Some(3), "the sale can sell the three units again");
    let audited: String =
        sqlx::query_scalar("SELECT CAST(details AS CHAR) FROM audit_log WHERE action = 'adapter_rewrite'")
            .fetch_one(&state)
            .await
            .unwrap();
    assert!(audited.contains("\"redis_after\":3") && audited.contains("\"counter_after\":3"), "{audited}");
    sale.cleanup().await;
}
