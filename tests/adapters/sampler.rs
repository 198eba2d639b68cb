//! The window's board over an adapter (issue 29): the sale opened the one way the CLI and the
//! window open it, its sampler's ticks carrying the same readings as a one-off reading, a drift
//! confirmed only once settled, and the lost order beside the tick for the lost-orders panel.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use stockguard_core::adapter::sampler::{self, Outlets};
use stockguard_core::adapter::{AdapterFile, OpenedSale};
use stockguard_core::profile::{ConnectionSettings, EnvironmentKind};
use stockguard_core::recon::sampler::{History, SamplerConfig};
use stockguard_core::recon::DriftStatus;
use tokio::sync::{broadcast, watch};

use crate::sales::course_stream::CourseStreamSale;
use crate::sales::{Answer, Buy, Traffic};
use crate::support::waits::wait_for;

const SETTLE: Duration = Duration::from_secs(30);

#[tokio::test]
async fn the_boards_sampler_over_an_adapter_confirms_a_settled_drift_and_names_the_lost_order() {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 20), (2, 20)]).await);
    let file = AdapterFile::parse(&sale.adapter_toml(), Path::new("sale.toml")).expect("the adapter file parses");
    let settings = ConnectionSettings::from_urls(
        EnvironmentKind::Sandbox,
        &sale.db.url,
        &crate::support::redis_url(),
        "unused-by-an-adapter-sale",
    );
    let opened = Arc::new(OpenedSale::connect(file, &settings, None).await.expect("the sale opens"));
    assert!(opened.mysql.is_some() && opened.redis.is_some() && opened.state.is_none());

    // Clean traffic, then the consumer swallows one entry: a buyer told "taken", no row.
    let tally = Traffic::buyers(10).on(&[1, 2]).run(&sale).await;
    assert_eq!(tally.accepted, 10, "{tally:?}");
    wait_for("the consumer drains the clean traffic", SETTLE, async || sale.stream_backlog().await == 0).await;
    sale.swallow_next(1);
    assert_eq!(sale.buy(901, 2).await.expect("the order path answers"), Answer::Accepted);
    wait_for("the consumer acknowledges every entry", SETTLE, async || {
        sale.stream_backlog().await == 0 && sale.swallowed().len() == 1
    })
    .await;
    let order = sale.swallowed()[0].to_string();

    let (ticks, mut tick_rx) = broadcast::channel(4);
    let (errors, mut error_rx) = broadcast::channel(16);
    let (latest, latest_rx) = watch::channel(Arc::new(Vec::new()));
    let history = Arc::new(Mutex::new(History::new(10, 2)));
    let (stop, stopped) = watch::channel(false);
    let config = SamplerConfig { interval: Duration::from_millis(200), ..SamplerConfig::default() };
    let out = Outlets { ticks, latest, errors, history: history.clone() };
    let running = tokio::spawn(sampler::run(opened.clone(), config, out, stopped));

    // Ticks until product 2's drift is confirmed: two settled readings agreeing on REDIS_LOW 1.
    let confirmed = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            tokio::select! {
                tick = tick_rx.recv() => {
                    let tick = tick.expect("the sampler keeps sending");
                    if let Some(c) = tick.confirmed.iter().find(|c| c.product_id == 2) {
                        return (tick.clone(), c.clone());
                    }
                }
                Ok(e) = error_rx.recv() => panic!("a reading over the adapter failed: {e}"),
            }
        }
    })
    .await
    .expect("product 2's drift is confirmed within a minute");
    let (tick, drift) = confirmed;
    assert_eq!((drift.status, drift.drift), (DriftStatus::RedisLow, Some(-1)), "{drift:?}");
    let two = tick.readings.iter().find(|r| r.product_id == 2).expect("product 2 is read");
    assert!(two.settled, "a confirmed drift is of a settled reading: {two:?}");
    assert!(tick.confirmed.iter().all(|c| c.product_id == 2), "product 1 has no drift: {:?}", tick.confirmed);

    // Beside the tick: the lost order, by the sale's own id, on product 2 only.
    let adapter_readings = latest_rx.borrow().clone();
    let lost = |p: u64| {
        adapter_readings.iter().find(|r| r.reading.product_id == p).and_then(|r| r.lost.clone()).expect("lost is known")
    };
    assert_eq!(lost(2).order_ids, vec![order]);
    assert_eq!(lost(1).count, 0);
    assert!(history.lock().unwrap().recent_len() >= 2, "each tick is a point of the drift chart");

    // Stopping the sampler ends it (the window replacing its connection).
    stop.send(true).unwrap();
    tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .expect("the sampler stops when told")
        .expect("the sampler did not panic");
    sale.cleanup().await;
}
