//! Accepted but lost (issue 29): an order the sale's consumer acknowledged without writing its
//! row is listed by its id, and its unit shows in the reading; a source that keeps nothing it
//! carried says lost orders cannot be known.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::adapter::lost::{self, LostInReading, LostOptions};
use stockguard_core::adapter::{self, AdapterFile, SaleLinks};
use stockguard_core::recon::DriftStatus;

use crate::cli::{adapter_env, stockguard};
use crate::sales::course_stream::CourseStreamSale;
use crate::sales::fastapi_rabbit::FastapiRabbitSale;
use crate::sales::{redis_conn, Answer, Buy, Traffic};
use crate::support::waits::wait_for;

const SETTLE: Duration = Duration::from_secs(30);

fn file(text: &str) -> AdapterFile {
    AdapterFile::parse(text, Path::new("sale.toml")).expect("the sale's adapter file parses")
}

#[sqlx::test(migrations = false)]
async fn an_order_the_consumer_acknowledged_without_its_row_is_listed_as_lost_and_its_unit_reads_redis_low(
    state: MySqlPool,
) {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 20), (2, 20)]).await);
    let file = file(&sale.adapter_toml());
    let redis = redis_conn().await;
    let links = SaleLinks { db: Some(&sale.db.pool), redis: Some(&redis) };
    let baselines = HashMap::from([(1.into(), 20), (2.into(), 20)]);

    // Clean traffic: every entry acknowledged has its row, and none is lost.
    let tally = Traffic::buyers(16).on(&[1, 2]).run(&sale).await;
    assert_eq!(tally.accepted, 16, "{tally:?}");
    wait_for("the consumer drains the stream", SETTLE, async || sale.stream_backlog().await == 0).await;
    let clean =
        lost::scan(&file, &links, &[1.into(), 2.into()], &LostOptions::default()).await.expect("the stream is scanned");
    assert!(clean.knowable, "{clean:?}");
    assert_eq!((clean.scanned, clean.acknowledged, clean.orders.len()), (16, 16, 0), "{clean:?}");

    // The consumer swallows the next entry: buyer 900 was told "taken", no row is written.
    sale.swallow_next(1);
    assert_eq!(sale.buy(900, 2).await.expect("the order path answers"), Answer::Accepted);
    wait_for("the consumer acknowledges it", SETTLE, async || {
        sale.stream_backlog().await == 0 && sale.swallowed().len() == 1
    })
    .await;
    let order = sale.swallowed()[0].to_string();
    let scan =
        lost::scan(&file, &links, &[1.into(), 2.into()], &LostOptions::default()).await.expect("the stream is scanned");
    assert_eq!(scan.orders.len(), 1, "{scan:?}");
    assert_eq!((scan.orders[0].product_id.clone(), scan.orders[0].order_id.as_str()), (2.into(), order.as_str()));
    assert!(!scan.reached_limit && scan.unjudged == 0, "{scan:?}");

    // Its unit: Redis took it, no row holds it; the reading says REDIS_LOW by one and names it.
    let mut readings = Vec::new();
    wait_for("the sale settles", SETTLE, async || {
        readings = adapter::read(&file, &links, &baselines, &[]).await.expect("the sale reads");
        readings.iter().all(|r| r.reading.settled)
    })
    .await;
    let of = |p: u64| readings.iter().find(|r| r.reading.product_id == p).expect("the product is read");
    assert_eq!((of(2).reading.status, of(2).reading.drift), (DriftStatus::RedisLow, Some(-1)));
    assert_eq!(of(2).lost, Some(LostInReading { count: 1, order_ids: vec![order.clone()] }));
    assert_eq!((of(1).reading.status, of(1).lost.clone()), (DriftStatus::Ok, Some(LostInReading::default())));

    // The CLI: one line per order, then the summary; --json the same list.
    let dir = tempfile::tempdir().unwrap();
    let owned = adapter_env(&sale, dir.path(), &state).await;
    let env: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let run = stockguard(&["adapter", "lost"], &env);
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{out}{}", String::from_utf8_lossy(&run.stderr));
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with(&format!("product 2  order {order}  entry ")), "{out}");
    assert!(lines[1].starts_with("1 lost order(s)") && lines[1].contains("17 delivered entries read"), "{out}");
    let json = stockguard(&["adapter", "lost", "--json", "--limit", "5"], &env);
    let scan: serde_json::Value = serde_json::from_slice(&json.stdout).expect("adapter lost --json prints JSON");
    assert_eq!((scan["limit"].as_u64(), scan["scanned"].as_u64()), (Some(5), Some(5)), "{scan}");
    assert_eq!(scan["reached_limit"], true, "{scan}");
    assert_eq!(scan["orders"][0]["order_id"], order.as_str(), "the newest entries are read first: {scan}");
    let recon = stockguard(&["recon"], &env);
    let text = String::from_utf8_lossy(&recon.stdout);
    assert!(text.contains(&format!("product 2: 1 lost (accepted, acknowledged, never a row): {order}")), "{text}");
    sale.cleanup().await;
}

#[sqlx::test(migrations = false)]
async fn a_rabbitmq_sale_says_lost_orders_cannot_be_known_rather_than_listing_none(state: MySqlPool) {
    let sale = Arc::new(FastapiRabbitSale::start(&[(1, 10)]).await);
    Traffic::buyers(4).on(&[1]).run(&sale).await;
    let file = file(&sale.adapter_toml());
    let redis = redis_conn().await;
    let links = SaleLinks { db: Some(&sale.db.pool), redis: Some(&redis) };

    let scan = lost::scan(&file, &links, &[1.into()], &LostOptions::default()).await.expect("the file is read");
    assert!(!scan.knowable && scan.orders.is_empty(), "{scan:?}");
    assert!(scan.unknowable_because.as_deref().is_some_and(|w| w.contains("RabbitMQ")), "{scan:?}");
    let readings = adapter::read(&file, &links, &HashMap::new(), &[]).await.expect("the sale reads");
    assert_eq!(readings[0].lost, None, "null in the reading, not an empty list");

    let dir = tempfile::tempdir().unwrap();
    let adapter = dir.path().join("sale.toml");
    std::fs::write(&adapter, sale.adapter_toml()).unwrap();
    let state_url = crate::support::mysql_url_of(&state).await;
    let redis_url = crate::support::redis_url();
    let env = [
        ("STOCKGUARD_MYSQL_URL", sale.db.url.as_str()),
        ("STOCKGUARD_REDIS_URL", redis_url.as_str()),
        ("STOCKGUARD_ENVIRONMENT", "sandbox"),
        ("STOCKGUARD_ADAPTER", adapter.to_str().unwrap()),
        ("STOCKGUARD_STATE_URL", state_url.as_str()),
    ];
    let run = stockguard(&["adapter", "lost"], &env);
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{out}{}", String::from_utf8_lossy(&run.stderr));
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("lost orders cannot be known for this source: RabbitMQ"), "{out}");
    sale.cleanup().await;
}
