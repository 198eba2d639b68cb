//! The sale overview, the first screen after connecting: a load runs with `stockguard load`
//! against an engine of a seeded sandbox sale while the window watches; the overview's
//! accepted, sold-out and error counts are the load generator's own, its units sold are the
//! ledger's, and the burn-down of the sale and of the product under load is drawn.

use super::*;

/// The product the load empties (1,000 units in the demo sale) and a small one.
const BIG: u64 = 1001;
const SMALL: u64 = 1008;

/// A figure as the window prints it (`1,020`), as a number.
fn figure(text: &str) -> f64 {
    text.replace(',', "").parse().unwrap_or(f64::NAN)
}

#[sqlx::test(migrations = "../migrations")]
async fn the_overview_shows_a_running_loads_figures_as_the_load_generator_counted_them(pool: MySqlPool) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let redis = TestRedis::new("e2eov").await;
    let (config, _) = seeded_sandbox(&pool, &redis).await;
    let _engine = Engine::start(config.path());
    let target: String = {
        let deadline = std::time::Instant::now() + STEP;
        loop {
            let addr: Option<String> =
                sqlx::query_scalar("SELECT listen_addr FROM engine_heartbeats").fetch_optional(&pool).await.unwrap();
            if let Some(addr) = addr {
                break format!("http://{addr}");
            }
            assert!(std::time::Instant::now() < deadline, "the engine never wrote its heartbeat");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };

    // The window's turn first: a load started while another scenario holds the display could
    // be over before this window opens (then the overview shows no pace at all).
    let _one_window = one_window_at_a_time().await;
    // About 15 s of buyers, so the window sees the load running.
    let load = stockguard(
        config.path(),
        &[
            "load",
            "--target",
            &target,
            "--product",
            &BIG.to_string(),
            "--product",
            &SMALL.to_string(),
            "--buyers",
            "800",
            "--rate",
            "100",
            "--concurrency",
            "8",
            "--duration",
            "60s",
            "--json",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .expect("stockguard load starts");

    let (driver, client) = open_app(config.path(), "e2e-overview").await;
    let outcome = async {
        let c = &client;
        // 1. Connected, the overview is the first screen, and the load's pace shows.
        wait_banner(c, "banner sandbox").await;
        // The language is kept in the webview's storage, shared by every app on this machine:
        // English, whatever another run left.
        if text_of(c, "#lang-toggle").await.as_deref() == Some("English") {
            click(c, "#lang-toggle").await;
        }
        wait_attr(c, "#nav [data-screen=overview]", "class", "current", "the overview is the first screen").await;
        wait_text(c, "#ov-rate", "the load's pace shows", |t| figure(t) > 0.0).await;
        wait_text(c, "#ov-engines tbody tr.answered td.answer", "the engine answers the scrape", |t| t == "answered")
            .await;
        assert!(!exists(c, "#ov-engines tbody tr.not_answering").await, "no engine is silent");

        // 2. One product's burn-down, picked by id, while it sells.
        type_into(c, "#ov-product", &BIG.to_string()).await;
        click(c, "#ov-product-go").await;
        wait_text(c, "#ov-burndown-info", "the product's burn-down", |t| t.starts_with(&format!("product {BIG}:")))
            .await;
        wait_attr_prefix(c, "#ov-burndown", "src", "data:image/svg+xml").await;
        // The first line is the verdict: the seed's oversold product makes the sale unsafe.
        wait_attr(c, "#ov-verdict", "data-level", "unsafe", "the seeded sale is not safe").await;
        wait_text(c, "#ov-verdict", "the verdict counts", |t| {
            t.starts_with("Not safe") && t.contains("products oversold: 1")
        })
        .await;
        tokio::time::sleep(Duration::from_secs(3)).await;
        screenshot(c, "overview").await;
        click(c, "#lang-toggle").await;
        wait_text(c, "#ov-verdict", "the verdict in Chinese", |t| {
            t.starts_with("不安全：") && t.contains("超卖商品 1 个")
        })
        .await;
        screenshot(c, "overview-unsafe-zh").await;
        click(c, "#lang-toggle").await;

        // 3. The load ends: its own counts, then the window's.
        let out = tokio::task::spawn_blocking(move || load.wait_with_output()).await.unwrap().unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("stockguard load --json: {e}: {}", String::from_utf8_lossy(&out.stdout)));
        let count = |k: &str| report[k].as_u64().unwrap_or_else(|| panic!("{k} in {report}"));
        let (accepted, sold_out, errors) = (count("accepted"), count("sold_out"), count("errors"));
        assert!(accepted > 0 && sold_out > 0, "the load sold out its products: {report}");
        for (css, want) in [("#ov-accepted", accepted), ("#ov-soldout", sold_out), ("#ov-errors", errors)] {
            wait_text(c, css, &format!("{css} is the load generator's {want}"), |t| figure(t) == want as f64).await;
        }
        // The engine answered nothing else than the load's requests.
        let mut answers = 0.0;
        for css in ["#ov-accepted", "#ov-soldout", "#ov-errors", "#ov-refused"] {
            answers += figure(&text_of(c, css).await.unwrap());
        }
        assert_eq!(answers, count("requests") as f64);

        // 4. Units sold are the ledger's (initial less the DB's stock), once the engine
        //    persisted everything (the load waited for it).
        let ledger_sold =
            support::scalar(&pool, "SELECT CAST(SUM(initial_stock) - SUM(stock) AS SIGNED) FROM inventory").await;
        wait_text(c, "#ov-sold", "units sold are the ledger's", |t| figure(t) == ledger_sold as f64).await;
        let load_units = support::scalar(
            &pool,
            "SELECT CAST(COALESCE(SUM(buy_count), 0) AS SIGNED) FROM orders \
             WHERE idempotency_key LIKE 'load-%' AND status IN ('WAIT_PAY', 'PAID')",
        )
        .await;
        assert_eq!(load_units as u64, accepted, "every accepted order of the load is a live order of one unit");

        // 5. The whole sale's burn-down ends at initial less the live orders.
        click(c, "#ov-whole-sale").await;
        let live_left = support::scalar(
            &pool,
            "SELECT CAST((SELECT SUM(initial_stock) FROM inventory) - \
             (SELECT COALESCE(SUM(buy_count), 0) FROM orders WHERE status IN ('WAIT_PAY', 'PAID')) AS SIGNED)",
        )
        .await;
        wait_text(c, "#ov-burndown-info", "the sale's burn-down", |t| t.starts_with("Whole sale:")).await;
        wait_attr(c, "#ov-burndown-info", "data-remaining", &live_left.to_string(), "the curve ends on the ledger")
            .await;

        // 6. The seed's broken products taken out of the sale: the verdict turns exact.
        sqlx::query("DELETE FROM inventory WHERE product_id >= 1016").execute(&pool).await.unwrap();
        wait_attr(c, "#ov-verdict", "data-level", "exact", "the sale reads exact").await;
        wait_text(c, "#ov-verdict", "the exact verdict", |t| t.starts_with("Exact")).await;
        screenshot(c, "overview-exact").await;

        // 7. In Chinese.
        click(c, "#lang-toggle").await;
        wait_text(c, "#nav [data-screen=overview]", "the overview in Chinese", |t| t == "总览").await;
        wait_text(c, "#ov-burndown-info", "the burn-down in Chinese", |t| t.starts_with("整场活动")).await;
        wait_text(c, "#ov-verdict", "the exact verdict in Chinese", |t| t.starts_with("准确")).await;
        screenshot(c, "overview-exact-zh").await;
        click(c, "#lang-toggle").await;
    }
    .await;
    client.close().await.expect("session closes");
    drop(driver);
    outcome
}

/// Waits until `attribute` of the first element matching `css` starts with `prefix`.
async fn wait_attr_prefix(client: &Client, css: &str, attribute: &str, prefix: &str) {
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        let now = match client.find(Locator::Css(css)).await {
            Ok(element) => element.attr(attribute).await.ok().flatten(),
            Err(_) => None,
        };
        if now.as_deref().is_some_and(|v| v.starts_with(prefix)) {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "`{css}` {attribute} never started with {prefix}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
