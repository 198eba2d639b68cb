//! The state database is Stockguard's own (issue 49, item 1): a state URL naming the sale's own
//! database, or a database holding the sale's tables, is refused in one line before anything
//! is written; the review's run had migrated 25 tables of ours (`orders`, `inventory`, ...) into
//! the sale's database.

use sqlx::MySqlPool;

use crate::cli::stockguard;
use crate::sales::course_stream::CourseStreamSale;
use crate::support;

async fn baseline(sale: &CourseStreamSale, dir: &std::path::Path, state_url: &str) -> std::process::Output {
    let adapter = dir.join("sale.toml");
    std::fs::write(&adapter, sale.adapter_toml()).unwrap();
    let select_only = sale.db.select_only_url().await;
    let redis = support::redis_url();
    let env = [
        ("STOCKGUARD_MYSQL_URL", select_only.as_str()),
        ("STOCKGUARD_REDIS_URL", redis.as_str()),
        ("STOCKGUARD_ENVIRONMENT", "sandbox"),
        ("STOCKGUARD_ADAPTER", adapter.to_str().unwrap()),
        ("STOCKGUARD_STATE_URL", state_url),
    ];
    stockguard(&["adapter", "baseline", "--reason", "the sale opens"], &env)
}

fn refused_in_one_line(out: &std::process::Output, said: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "refused: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains(said), "{said:?} in {err}");
}

#[sqlx::test(migrations = false)]
async fn a_state_url_naming_the_sales_database_or_a_copy_of_it_is_refused_before_anything_is_written(state: MySqlPool) {
    let sale = CourseStreamSale::start(&[(1, 4)]).await;
    let dir = tempfile::tempdir().unwrap();
    let tables = sale.db.tables().await;

    // The sale's own database, with the account that owns it (it could migrate there).
    refused_in_one_line(&baseline(&sale, dir.path(), &sale.db.url).await, "names the sale's own database");
    assert_eq!(sale.db.tables().await, tables, "no table of ours among the sale's");

    // Another database that holds the sale's tables (a copy) and is not Stockguard's.
    sqlx::raw_sql("CREATE TABLE tb_seckill_voucher (voucher_id BIGINT PRIMARY KEY, stock INT)")
        .execute(&state)
        .await
        .unwrap();
    let state_url = support::mysql_url_of(&state).await;
    refused_in_one_line(&baseline(&sale, dir.path(), &state_url).await, "holds the sale's tables (tb_seckill_voucher)");
    let ours: i64 = support::scalar(
        &state,
        "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name <> 'tb_seckill_voucher'",
    )
    .await;
    assert_eq!(ours, 0, "nothing migrated into the copy");

    // A database of its own: migrated, and the baseline recorded there.
    sqlx::raw_sql("DROP TABLE tb_seckill_voucher").execute(&state).await.unwrap();
    let out = baseline(&sale, dir.path(), &state_url).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(support::scalar(&state, "SELECT COUNT(*) FROM adapter_baselines").await, 1);
    assert_eq!(sale.db.tables().await, tables);
    sale.cleanup().await;
}
