//! The DB ledger check: chunked, read-only, under a statement time limit the server enforces.

use crate::support;

use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::recon::ledger::{self, LedgerError, LedgerOptions, ServerKind};
use stockguard_core::recon::DriftStatus;
use stockguard_engine::sandbox::{self, seed, DEMO_PRODUCTS};
use support::TestRedis;

#[sqlx::test(migrations = "./migrations")]
async fn the_chunked_ledger_check_finds_the_seeded_mismatch_and_oversell(pool: MySqlPool) {
    let redis = TestRedis::new("ledger").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    sandbox::seed(&conns, &mut |_| {}).await.unwrap();

    let mut progress = Vec::new();
    let opts = LedgerOptions { first_chunk: 3, ..LedgerOptions::default() };
    let report = ledger::reconcile(&pool, &opts, false, &mut |done, total| progress.push((done, total))).await.unwrap();

    assert_eq!(report.products_checked as usize, DEMO_PRODUCTS.len());
    assert!(report.chunks > 1, "ran in chunks: {}", report.chunks);
    assert_eq!(progress.last(), Some(&(20, 20)), "progress reaches the end");
    let find = |status| DEMO_PRODUCTS.iter().find(|d| d.status == status).unwrap().id;
    let mismatch = report.mismatches.iter().find(|m| m.product_id == find(DriftStatus::LedgerMismatch)).unwrap();
    assert_eq!(mismatch.gap, -seed::SEEDED_LEDGER_EDIT);
    let oversold = report.mismatches.iter().find(|m| m.product_id == find(DriftStatus::Oversold)).unwrap();
    assert!(oversold.oversold);
    assert_eq!(report.mismatches.len(), 2, "{:?}", report.mismatches);
    assert_eq!(report.server, ServerKind::MariaDb, "this test machine runs MariaDB");
}

#[sqlx::test(migrations = "./migrations")]
async fn the_statement_time_limit_really_aborts_an_over_long_query_on_mariadb(pool: MySqlPool) {
    // 300,000 live orders over 1,000 products: the ledger query reads them all.
    sqlx::query(
        "INSERT INTO orders (order_no, user_id, product_id, buy_count, status, pay_deadline) \
         SELECT CONCAT('o', seq), seq, seq % 1000, 1, 'PAID', NOW() FROM seq_1_to_300000",
    )
    .execute(&pool)
    .await
    .unwrap();

    // MariaDB's statement timer is a thread of its own: on a two-core machine busy with other
    // builds it once fired only after the query (some 200 ms) had finished. Three tries: the
    // claim is that the limit aborts the statement, not that the machine's timer is punctual.
    let mut tries = Vec::new();
    for _ in 0..3 {
        let aborted = ledger::raw_ledger_query(&pool, Duration::from_millis(1)).await;
        let timed_out = matches!(aborted, Err(LedgerError::Timeout { limit_ms: 1 }));
        tries.push(aborted.map(|rows| rows.len()));
        if timed_out {
            break;
        }
    }
    assert!(matches!(tries.last(), Some(Err(LedgerError::Timeout { limit_ms: 1 }))), "{tries:?}");

    let rows = ledger::raw_ledger_query(&pool, Duration::from_secs(30)).await.unwrap();
    assert_eq!(rows.len(), 1000);
    assert_eq!(rows.iter().map(|(_, live)| live).sum::<i64>(), 300_000);
}

#[sqlx::test(migrations = "./migrations")]
async fn the_ledger_check_reads_one_snapshot_even_when_the_server_default_is_read_committed(pool: MySqlPool) {
    use sqlx::mysql::MySqlPoolOptions;
    use sqlx::Executor as _;
    use stockguard_engine::engine::ledger_write::{deduct, insert_orders, NewOrder, Source};

    sqlx::query("INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit) VALUES (1, 'hot', 1000000, 1000000, 1000000)")
        .execute(&pool)
        .await
        .unwrap();
    // Many MySQL 8 sites run READ COMMITTED: every connection of the checker's pool does here.
    let url = support::mysql_url_of(&pool).await;
    let read_committed = MySqlPoolOptions::new()
        .after_connect(|conn, _| {
            Box::pin(async move {
                conn.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED").await?;
                Ok(())
            })
        })
        .connect(&url)
        .await
        .unwrap();

    // A sale commits one order after another, each moving stock and live orders together.
    let selling = tokio::spawn({
        let pool = pool.clone();
        async move {
            for n in 0..3000u64 {
                let mut tx = pool.begin().await.unwrap();
                assert!(deduct(&mut tx, 1, 1).await.unwrap());
                let no = format!("o{n}");
                let order = NewOrder {
                    order_no: &no,
                    user_id: n,
                    product_id: 1,
                    qty: 1,
                    idempotency_key: &no,
                    source: Source::Db,
                    pay_deadline: chrono::Utc::now().naive_utc(),
                };
                insert_orders(&mut tx, &[order]).await.unwrap();
                tx.commit().await.unwrap();
            }
        }
    });
    let mut checks = 0;
    while !selling.is_finished() {
        let report =
            ledger::reconcile(&read_committed, &LedgerOptions::default(), false, &mut |_, _| {}).await.unwrap();
        assert!(report.mismatches.is_empty(), "phantom mismatch after {checks} clean checks: {:?}", report.mismatches);
        checks += 1;
    }
    selling.await.unwrap();
    assert!(checks > 50, "the checks ran while the sale went on ({checks})");
}
