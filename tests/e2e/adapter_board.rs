//! The console on a sale Stockguard did not build (issue 29), end to end: a profile that names
//! an adapter file opens the sale's own tables, keys and stream; the board reads each product
//! with our statuses (a planted drift, a lost order), the lost-orders panel names the order by
//! the sale's own id, an alert fires, the overview gives its verdict and the figures the
//! reading and the sale's own tables give, the drills say in one line why they cannot run
//! there; in English and in Chinese, photographed.
//!
//! The sale is the widely copied Java course shape (`docs/adapters/course_stream.toml`): a
//! voucher stock table, a voucher order table, a Redis counter per voucher and one Redis
//! stream of accepted orders read by a consumer group. Here it stands still: its rows, keys
//! and acknowledged entries are written by the test, so what the board must show is known.
//!
//! On the same sale with a state database (issue 47): an acknowledgement the on-call took in
//! the CLI stays open when the window opens (its first tick confirms no drift, which proves
//! nothing gone) and shows taken once the drift is confirmed again, never paged as new; it
//! closes as cleared only once the repaired product reads OK.

use super::desktop_bus::DesktopBus;
use super::*;

const GROUP: &str = "g1";

/// What the sale holds (initial stock 20 each):
/// - voucher 1: 2 orders, 18 left, Redis 18: exact;
/// - voucher 2: 1 order, 19 left, Redis 18: order 2002 was accepted (its entry acknowledged by
///   the consumer) and never written: lost, REDIS_LOW 1;
/// - voucher 3: no order, 20 left, Redis 23: REDIS_HIGH 3.
async fn plant_sale(pool: &MySqlPool, redis: &TestRedis, stream: &str) {
    for ddl in [
        "CREATE TABLE tb_seckill_voucher (voucher_id BIGINT PRIMARY KEY, stock INT NOT NULL)",
        "CREATE TABLE tb_voucher_order (id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, voucher_id BIGINT NOT NULL, \
         status TINYINT NOT NULL, create_time DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP)",
        "INSERT INTO tb_seckill_voucher VALUES (1, 18), (2, 19), (3, 20)",
        "INSERT INTO tb_voucher_order (id, user_id, voucher_id, status) VALUES (1001, 7, 1, 1), (1002, 8, 1, 2), \
         (2001, 9, 2, 1)",
    ] {
        sqlx::query(ddl).execute(pool).await.unwrap();
    }
    let client = redis::Client::open(redis.url.as_str()).unwrap();
    let mut r = client.get_multiplexed_async_connection().await.unwrap();
    let prefix = redis.keys.prefix();
    for (voucher, units) in [(1, 18), (2, 18), (3, 23)] {
        let _: () = redis::cmd("SET")
            .arg(format!("{prefix}:seckill:stock:{voucher}"))
            .arg(units)
            .query_async(&mut r)
            .await
            .unwrap();
    }
    let _: () = redis::cmd("XGROUP")
        .arg("CREATE")
        .arg(stream)
        .arg(GROUP)
        .arg("$")
        .arg("MKSTREAM")
        .query_async(&mut r)
        .await
        .unwrap();
    for (order, voucher) in [(1001, 1), (1002, 1), (2001, 2), (2002, 2)] {
        let _: String = redis::cmd("XADD")
            .arg(stream)
            .arg("*")
            .arg("id")
            .arg(order)
            .arg("voucherId")
            .arg(voucher)
            .arg("userId")
            .arg(order % 100)
            .query_async(&mut r)
            .await
            .unwrap();
    }
    // The consumer took every entry and acknowledged it, 2002's without writing its row.
    let read: redis::Value = redis::cmd("XREADGROUP")
        .arg("GROUP")
        .arg(GROUP)
        .arg("c1")
        .arg("COUNT")
        .arg(10)
        .arg("STREAMS")
        .arg(stream)
        .arg(">")
        .query_async(&mut r)
        .await
        .unwrap();
    let ids: Vec<String> = stream_ids(&read);
    assert_eq!(ids.len(), 4, "the consumer read every entry: {read:?}");
    let acked: i64 = redis::cmd("XACK").arg(stream).arg(GROUP).arg(&ids).query_async(&mut r).await.unwrap();
    assert_eq!(acked, 4);
}

/// The entry ids of an `XREADGROUP` answer of one stream: `[[name, [[id, fields], ...]]]`
/// (RESP2; RESP3 answers a map of name to entries).
fn stream_ids(v: &redis::Value) -> Vec<String> {
    use redis::Value::{Array, BulkString, Map};
    let entries = match v {
        Array(streams) => match streams.first() {
            Some(Array(pair)) => pair.get(1),
            _ => None,
        },
        Map(streams) => streams.first().map(|(_, entries)| entries),
        _ => None,
    };
    let Some(Array(entries)) = entries else { panic!("not an XREADGROUP answer: {v:?}") };
    entries
        .iter()
        .map(|entry| match entry {
            Array(parts) => match parts.first() {
                Some(BulkString(id)) => String::from_utf8_lossy(id).into_owned(),
                other => panic!("an entry without an id: {other:?}"),
            },
            other => panic!("not an entry: {other:?}"),
        })
        .collect()
}

/// The adapter file a user would write for this sale: `docs/adapters/course_stream.toml`, as
/// the documentation gives it, with this test's keys, stream and name, and the initial stock
/// given as a number (no state database here to record a baseline in).
fn adapter_toml(prefix: &str, stream: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/adapters/course_stream.toml");
    let documented = std::fs::read_to_string(&path).expect("docs/adapters/course_stream.toml is readable");
    let mut file = documented;
    for (from, to) in [
        ("name = \"voucher-sale\"".to_string(), "name = \"course-e2e\"".to_string()),
        ("initial = \"baseline\"".to_string(), "initial = 20".to_string()),
        ("\"seckill:".to_string(), format!("\"{prefix}:seckill:")),
        ("stream = \"stream.orders\"".to_string(), format!("stream = \"{stream}\"")),
        ("group = \"g1\"".to_string(), format!("group = \"{GROUP}\"")),
    ] {
        assert!(file.contains(&from), "the documented file has {from}");
        file = file.replace(&from, &to);
    }
    file
}

#[sqlx::test(migrations = false)]
async fn an_on_call_engineer_watches_a_sale_stockguard_did_not_build_through_its_adapter(pool: MySqlPool) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let redis = TestRedis::new("e2e-adapter").await;
    let stream = format!("{}:stream.orders", redis.keys.prefix());
    plant_sale(&pool, &redis, &stream).await;

    let config = tempfile::tempdir().unwrap();
    let file = config.path().join("course-e2e.toml");
    std::fs::write(&file, adapter_toml(redis.keys.prefix(), &stream)).unwrap();
    let mysql_url = support::mysql_url_of(&pool).await;
    let mut store = ProfileStore::load(&config.path().join("profiles.toml")).unwrap();
    let mut sale = profile(EnvironmentKind::Sandbox, &mysql_url, &redis);
    sale.adapter = Some(file.display().to_string());
    store.upsert("sandbox", sale).unwrap();
    store.save().unwrap();

    let _one_window = one_window_at_a_time().await;
    let (driver, client) = open_app(config.path(), "e2e-adapter").await;
    let outcome = async {
        let c = &client;
        // 1. The overview: its first line the verdict (two drifts confirmed), the units sold of
        //    initial stock from the reading, the sale's orders from its own table, and a line
        //    saying which figures only our engines have.
        wait_attr(c, "#nav [data-screen=overview]", "class", "current", "connected: the overview first").await;
        wait_text(c, "#ov-adapter-note", "the overview names the sale over its adapter", |t| {
            t.contains("course-e2e") && t.contains("adapter")
        })
        .await;
        wait_text(c, "#ov-verdict", "the verdict counts the two drifts", |t| {
            t.starts_with("Needs attention") && t.contains("drifting: 2")
        })
        .await;
        wait_text(c, "#ov-sold", "3 units sold (2 + 1 live orders)", |t| t == "3").await;
        wait_text(c, "#ov-sold-of", "of 60", |t| t.contains("60")).await;
        wait_text(c, "#ov-accepted", "the sale's 3 order rows", |t| t == "3").await;
        let errors_hidden = c.execute("return document.querySelector('#ov-errors').closest('.figure').hidden;", vec![]);
        assert_eq!(errors_hidden.await.unwrap(), serde_json::json!(true), "an engine-only figure is left out");
        screenshot(c, "adapter-overview").await;
        wait_log_line(config.path(), &["connected", "profile=\"sandbox\"", "course-e2e.toml"]).await;

        // 2. The board: the sale's products with our statuses, most severe first.
        click(c, "#nav [data-screen=board]").await;
        let row = |p: u64| format!("#products tbody tr[data-product-id=\"{p}\"]");
        wait_text(c, &format!("{} td.status", row(3)), "voucher 3 reads REDIS_HIGH", |t| t == "REDIS_HIGH").await;
        wait_text(c, &format!("{} td.drift", row(3)), "by the 3 planted units", |t| t == "3").await;
        wait_text(c, &format!("{} td.status", row(2)), "voucher 2 reads REDIS_LOW", |t| t == "REDIS_LOW").await;
        wait_text(c, &format!("{} td.drift", row(2)), "by its lost unit", |t| t == "-1").await;
        wait_text(c, &format!("{} td.status", row(1)), "voucher 1 is exact", |t| t == "OK").await;
        wait_text(c, "#health-adapter", "the strip names the sale", |t| t == "course-e2e").await;
        let strip = c.find(Locator::Css("#health")).await.unwrap().attr("class").await.unwrap().unwrap_or_default();
        assert!(!strip.contains("bad"), "no engine of ours to probe is not a failure: {strip}");

        // 3. The lost-orders panel: order 2002 of voucher 2, by the sale's own id.
        wait_text(c, "#lost-orders tbody tr[data-product-id=\"2\"] td.order-ids", "the lost order is named", |t| {
            t == "2002"
        })
        .await;
        wait_text(c, "#lost-summary", "the panel says what lost means", |t| t.starts_with("1 orders of 1 products"))
            .await;
        screenshot(c, "adapter-board").await;

        // 4. The alerts: the confirmed drifts fire, with the sale's own product ids; their
        //    acknowledgement needs a state database, which this profile has not, and says so.
        wait_text(c, "#alerts-count", "two drifts fire", |t| t == "2").await;
        screenshot(c, "adapter-board").await;
        click(c, "#alerts-toggle").await;
        wait_text(c, "#alerts-table tbody", "voucher 3's drift fires", |t| {
            t.contains("Drift confirmed") && t.contains('3')
        })
        .await;
        wait_text(c, "#alerts-error", "no state database, said", |t| t.contains("state database")).await;
        click(c, "#alerts-close").await;

        // 5. The drills cannot run on this sale: one line says why.
        click(c, "#nav [data-screen=drills]").await;
        wait_text(c, "#error", "the drills say why not", |t| t.contains("course-e2e") && t.contains("sandbox")).await;

        // 6. In Chinese: the board, its panel and the overview's line.
        click(c, "#lang-toggle").await;
        click(c, "#nav [data-screen=board]").await;
        wait_text(c, &format!("{} td.status", row(3)), "the status in Chinese", |t| t == "Redis 偏高").await;
        wait_text(c, "#lost-summary", "the panel in Chinese", |t| t.contains("笔订单")).await;
        wait_text(c, "#health-adapter-box", "the strip in Chinese", |t| t.contains("经适配器读取的销售")).await;
        screenshot(c, "adapter-board-zh").await;
        click(c, "#nav [data-screen=overview]").await;
        wait_text(c, "#ov-adapter-note", "the overview's line in Chinese", |t| t.contains("通过适配器读取")).await;
        click(c, "#lang-toggle").await;
    };
    outcome.await;
    drop(client);
    drop(driver);
}

/// A database of the sale's own on the test's server, apart from `state` (Stockguard's own):
/// its pool and URL. Dropped by [`drop_database`].
async fn sale_database(state: &MySqlPool) -> (MySqlPool, String) {
    let name = format!("sale_{}", support::unique_prefix("acks"));
    sqlx::query(&format!("CREATE DATABASE `{name}`")).execute(state).await.unwrap();
    let mut url = url::Url::parse(&support::mysql_url_of(state).await).unwrap();
    url.set_path(&format!("/{name}"));
    let pool = MySqlPool::connect(url.as_str()).await.expect("the sale's database is reachable");
    (pool, url.to_string())
}

async fn drop_database(state: &MySqlPool, sale: MySqlPool) {
    let (name,): (String,) = sqlx::query_as("SELECT DATABASE()").fetch_one(&sale).await.unwrap();
    sale.close().await;
    sqlx::query(&format!("DROP DATABASE `{name}`")).execute(state).await.unwrap();
}

/// How many rows of the state database's audit log record `action` on `target`.
async fn audited(state: &MySqlPool, action: &str, target: &str) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE action = ? AND target = ?")
        .bind(action)
        .bind(target)
        .fetch_one(state)
        .await
        .unwrap()
}

#[sqlx::test(migrations = "../migrations")]
async fn an_adapter_drift_acknowledged_before_the_window_opens_stays_taken_until_it_reads_ok(state: MySqlPool) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    const REASON: &str = "e2e: the restart overwrite of voucher 3, fixing it";
    let redis = TestRedis::new("e2e-acks").await;
    let stream = format!("{}:stream.orders", redis.keys.prefix());
    let (sale_db, sale_url) = sale_database(&state).await;
    plant_sale(&sale_db, &redis, &stream).await;

    // The profile names the adapter file and a state database of Stockguard's own (this
    // test's, migrated), where the sale's acknowledgements live.
    let config = tempfile::tempdir().unwrap();
    let file = config.path().join("course-e2e.toml");
    std::fs::write(&file, adapter_toml(redis.keys.prefix(), &stream)).unwrap();
    let mut store = ProfileStore::load(&config.path().join("profiles.toml")).unwrap();
    let mut sale = profile(EnvironmentKind::Sandbox, &sale_url, &redis);
    sale.adapter = Some(file.display().to_string());
    sale.state_url = Some(support::mysql_url_of(&state).await);
    store.upsert("sandbox", sale).unwrap();
    store.save().unwrap();

    // Before the window opens, the on-call took voucher 3's confirmed drift in the CLI.
    let acked = stockguard(config.path(), &["alerts", "ack", "drift:3", "--reason", REASON])
        .output()
        .expect("stockguard alerts ack runs");
    let said = String::from_utf8_lossy(&acked.stdout);
    assert!(acked.status.success(), "alerts ack: {said}{}", String::from_utf8_lossy(&acked.stderr));
    assert!(said.starts_with("acknowledged drift:3 by "), "{said}");
    let (ack_id, kind, product, is_text): (u64, String, Option<String>, bool) = sqlx::query_as(
        "SELECT id, kind, product_id, product_is_text FROM alert_acks WHERE sale = 'course-e2e' \
         AND alert_key = 'drift:3' AND closed_at IS NULL",
    )
    .fetch_one(&state)
    .await
    .expect("one open acknowledgement of drift:3 in the state database");
    assert_eq!(
        (kind.as_str(), product.as_deref(), is_text),
        ("DRIFT_CONFIRMED", Some("3"), false),
        "the acknowledgement keeps the course's numeric product 3 as a number"
    );
    let target = "sale:course-e2e:drift:3";
    assert_eq!(audited(&state, "alert.ack", target).await, 1, "the acknowledgement is audited");
    let still_open = || async {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM alert_acks WHERE id = ? AND closed_at IS NULL")
            .bind(ack_id)
            .fetch_one(&state)
            .await
            .unwrap()
            == 1
    };

    let desktop = DesktopBus::start().await;
    let _one_window = one_window_at_a_time().await;
    let (driver, client) =
        open_app_with(config.path(), "e2e-adapter-acks", &[("DBUS_SESSION_BUS_ADDRESS", desktop.address.clone())])
            .await;
    let outcome = async {
        let c = &client;
        wait_attr(c, "#nav [data-screen=overview]", "class", "current", "connected: the overview first").await;
        click(c, "#nav [data-screen=board]").await;
        let row = |p: u64| format!("#products tbody tr[data-product-id=\"{p}\"]");
        wait_text(c, &format!("{} td.status", row(3)), "voucher 3 reads REDIS_HIGH", |t| t == "REDIS_HIGH").await;
        wait_text(c, &format!("{} td.drift", row(3)), "by the 3 planted units", |t| t == "3").await;

        // 1. The drifts confirmed (two agreeing readings, so past the window's first tick):
        //    voucher 2's fires untaken, voucher 3's shows the on-call's acknowledgement and is
        //    not counted, paged or badged as new.
        click(c, "#alerts-toggle").await;
        let alert = |key: &str| format!("#alerts-table tbody tr[data-key=\"{key}\"]");
        wait_text(c, &format!("{} td.ack", alert("drift:2")), "voucher 2's drift fires untaken", |t| t == "-").await;
        wait_text(c, &format!("{} td.ack", alert("drift:3")), "voucher 3's drift shows as taken", |t| {
            t.contains(REASON)
        })
        .await;
        wait_text(c, "#alerts-count", "only voucher 2's alert counts", |t| t == "1").await;
        assert!(still_open().await, "the acknowledgement is still open once the drift is confirmed");
        assert_eq!(audited(&state, "alert.ack.closed", target).await, 0, "nothing closed it");
        let deadline = tokio::time::Instant::now() + STEP;
        while !desktop.notes().iter().any(|n| n.summary == "Drift confirmed on product 2") {
            assert!(tokio::time::Instant::now() < deadline, "voucher 2's drift never paged: {:?}", desktop.notes());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let deadline = tokio::time::Instant::now() + STEP;
        while desktop.tray_label().await.as_deref() != Some("1") {
            assert!(tokio::time::Instant::now() < deadline, "the tray shows {:?}, not 1", desktop.tray_label().await);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let paged_3 = || desktop.notes().iter().filter(|n| n.summary.contains("product 3")).count();
        assert_eq!(paged_3(), 0, "the taken drift paged as new: {:?}", desktop.notes());

        // 2. Repaired behind the window's back: once the board reads voucher 3 OK, the
        //    acknowledgement closes itself as cleared, once, and its alert leaves the panel.
        let mut r = redis::Client::open(redis.url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
        let key = format!("{}:seckill:stock:3", redis.keys.prefix());
        let _: () = redis::cmd("SET").arg(&key).arg(20).query_async(&mut r).await.unwrap();
        wait_text(c, &format!("{} td.status", row(3)), "voucher 3 reads OK", |t| t == "OK").await;
        let deadline = tokio::time::Instant::now() + STEP;
        let closed: Option<String> = loop {
            let why: Option<String> =
                sqlx::query_scalar("SELECT close_reason FROM alert_acks WHERE id = ? AND closed_at IS NOT NULL")
                    .bind(ack_id)
                    .fetch_optional(&state)
                    .await
                    .unwrap()
                    .flatten();
            if why.is_some() {
                break why;
            }
            assert!(tokio::time::Instant::now() < deadline, "the acknowledgement never closed once voucher 3 read OK");
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert_eq!(closed.as_deref(), Some("cleared"));
        assert_eq!(audited(&state, "alert.ack.closed", target).await, 1, "its close is audited once");
        let deadline = tokio::time::Instant::now() + STEP;
        while exists(c, &alert("drift:3")).await {
            assert!(tokio::time::Instant::now() < deadline, "the cleared alert never left the panel");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        wait_text(c, "#alerts-count", "voucher 2's alert still counts", |t| t == "1").await;
        assert_eq!(paged_3(), 0, "the taken drift never paged: {:?}", desktop.notes());
    };
    outcome.await;
    drop(client);
    drop(driver);
    drop_database(&state, sale_db).await;
}
