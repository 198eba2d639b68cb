//! The sale's timeline in the window (issue 53): a product degraded by the CLI before the
//! window opens; the Timeline screen opened by its shortcut (Alt+9) lists it newest first with
//! who and why; a second product degraded while the screen is open shows up by itself, above
//! the first; the product filter keeps one product's events, the kind filter one kind's; the
//! board's "what happened to it?" and an alert's open the screen on their product.

use fantoccini::key::Key;
use serde::Deserialize;

use super::accessibility::press;
use super::*;

/// Seeded products that read OK: the switch changes the test makes are theirs alone.
const FIRST: u64 = 1005;
const SECOND: u64 = 1006;
const FIRST_REASON: &str = "e2e-tl: redis slow for the first";
const SECOND_REASON: &str = "e2e-tl: the second too";

/// One row of the timeline as the window lists it.
#[derive(Debug, Deserialize)]
struct Row {
    kind: String,
    product: Option<String>,
    at: String,
    actor: String,
    reason: String,
    outcome: String,
    record: String,
}

async fn rows(c: &Client) -> Vec<Row> {
    let v = c
        .execute(
            "return [...document.querySelectorAll('#timeline tbody tr')].map((r) => ({ kind: r.dataset.kind, \
             product: r.dataset.productId ?? null, at: r.dataset.at, \
             actor: r.querySelector('td.actor').innerText, reason: r.querySelector('td.reason').innerText, \
             outcome: r.querySelector('td.outcome').dataset.code, record: r.querySelector('td.record').innerText }));",
            vec![],
        )
        .await
        .unwrap();
    serde_json::from_value(v).unwrap()
}

/// Waits until the timeline's rows satisfy `ok`; returns them.
async fn wait_rows(c: &Client, what: &str, ok: impl Fn(&[Row]) -> bool) -> Vec<Row> {
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        let now = rows(c).await;
        if ok(&now) {
            return now;
        }
        if tokio::time::Instant::now() >= deadline {
            let said = text_of(c, "#error").await.unwrap_or_default();
            panic!("{what}: the timeline shows {now:#?}; the window said {said:?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `stockguard degrade on --product <product>` on the sandbox, as a person at a terminal.
fn degrade_on(config: &std::path::Path, product: u64, reason: &str) {
    let product = product.to_string();
    let out = stockguard(config, &["degrade", "on", "--product", &product, "--reason", reason, "--wait", "1"])
        .output()
        .expect("stockguard degrade on runs");
    assert!(out.status.success(), "degrade on {product}: {}", String::from_utf8_lossy(&out.stderr));
}

fn ours(rows: &[Row]) -> Vec<&Row> {
    rows.iter().filter(|r| r.reason.starts_with("e2e-tl:")).collect()
}

#[sqlx::test(migrations = "../migrations")]
async fn the_timeline_lists_the_sales_events_newest_first_with_who_and_why_and_follows_it(pool: MySqlPool) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let redis = TestRedis::new("e2e-timeline").await;
    let (config, mysql_url) = seeded_sandbox(&pool, &redis).await;
    let account = url::Url::parse(&mysql_url).unwrap().username().to_string();
    degrade_on(config.path(), FIRST, FIRST_REASON);

    let _one_window = one_window_at_a_time().await;
    let (driver, client) = open_app(config.path(), "e2e-timeline").await;
    let outcome = async {
        let c = &client;
        wait_attr(c, "#nav [data-screen=overview]", "class", "current", "connected: the overview first").await;

        // 1. Alt+9 opens the timeline: the first product's switch change, with who and why.
        press(c, &[Key::Alt], '9').await;
        wait_attr(c, "#nav [data-screen=timeline]", "aria-current", "page", "Alt+9 opens the timeline").await;
        let shown = wait_rows(c, "the first switch change", |r| ours(r).len() == 1).await;
        let first = ours(&shown)[0];
        assert_eq!(first.kind, "switch_change", "{first:?}");
        assert_eq!(first.product.as_deref(), Some(FIRST.to_string().as_str()), "{first:?}");
        assert_eq!(first.reason, FIRST_REASON);
        assert_eq!(first.actor, account, "the server's account, from the linked audit row: {first:?}");
        assert_eq!(first.outcome, "DEGRADED", "{first:?}");
        assert!(first.record.starts_with("switch_changes#"), "the record behind it: {first:?}");
        assert!(first.record.contains("audit_log#"), "and its audit row: {first:?}");

        // 2. The second product degraded while the screen is open: it shows up by itself, first.
        degrade_on(config.path(), SECOND, SECOND_REASON);
        let shown = wait_rows(c, "the second switch change, live", |r| ours(r).len() == 2).await;
        let listed: Vec<(&str, &str)> = ours(&shown).iter().map(|r| (r.reason.as_str(), r.actor.as_str())).collect();
        assert_eq!(listed, [(SECOND_REASON, account.as_str()), (FIRST_REASON, account.as_str())], "newest first");
        let times: Vec<&str> = shown.iter().map(|r| r.at.as_str()).collect();
        assert!(times.windows(2).all(|w| w[0] >= w[1]), "every row newest first: {times:?}");
        screenshot(c, "timeline").await;

        // 3. The product filter: the first product's events (and the whole sale's) only.
        type_into(c, "#tl-product", &FIRST.to_string()).await;
        press(c, &[], char::from(Key::Enter)).await;
        let shown = wait_rows(c, "the first product only", |r| {
            let o = ours(r);
            o.len() == 1 && o[0].reason == FIRST_REASON
        })
        .await;
        assert!(
            shown.iter().all(|r| r.product.is_none() || r.product.as_deref() == Some(FIRST.to_string().as_str())),
            "{shown:#?}"
        );

        // 4. The kind filter: switch changes only.
        click(c, "#tl-all-products").await;
        wait_rows(c, "every product again", |r| ours(r).len() == 2).await;
        choose(c, "#tl-kind", "switch_change").await;
        let shown =
            wait_rows(c, "switch changes only", |r| !r.is_empty() && r.iter().all(|r| r.kind == "switch_change")).await;
        assert_eq!(ours(&shown).len(), 2, "{shown:#?}");

        // 5. From the board: the second product picked, "what happened to it?".
        click(c, "#nav [data-screen=board]").await;
        type_into(c, "#search", &SECOND.to_string()).await;
        tick(c, &format!("#products tbody tr[data-product-id=\"{SECOND}\"] input.pick")).await;
        click(c, "#timeline-selected").await;
        wait_attr(c, "#nav [data-screen=timeline]", "aria-current", "page", "the board opens the timeline").await;
        let field = c.find(Locator::Css("#tl-product")).await.unwrap().prop("value").await.unwrap();
        assert_eq!(field.as_deref(), Some(SECOND.to_string().as_str()));
        wait_rows(c, "the second product's events, every kind", |r| {
            let o = ours(r);
            o.len() == 1 && o[0].reason == SECOND_REASON
        })
        .await;

        // 6. From an alert: the seeded REDIS_HIGH product's drift.
        click(c, "#alerts-toggle").await;
        click(c, "#alerts-table tbody tr[data-key=\"drift:1016\"] button.open-timeline").await;
        wait_attr(c, "#nav [data-screen=timeline]", "aria-current", "page", "an alert opens the timeline").await;
        let field = c.find(Locator::Css("#tl-product")).await.unwrap().prop("value").await.unwrap();
        assert_eq!(field.as_deref(), Some("1016"));
        assert!(is_panel_closed(c).await, "the alerts panel closes on the way");
    }
    .await;
    client.close().await.expect("session closes");
    drop(driver);
    outcome
}

async fn is_panel_closed(c: &Client) -> bool {
    c.execute("return document.getElementById('alerts-panel').hidden;", vec![]).await.unwrap() == json!(true)
}
