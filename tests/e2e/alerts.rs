//! The on-call engineer's alert, end to end: a drift injected on the sandbox raises a desktop
//! notification and the tray's count within two ticks; clicking the notification opens the
//! product; the alert is acknowledged in the window with a reason; a rewrite brings the drift
//! to 0 and the acknowledgement closes itself; the audit log shows both.

use std::time::{Duration, SystemTime};

use super::desktop_bus::DesktopBus;
use super::*;

/// A seeded product that reads OK: the drift the test injects is the only one it has.
const PRODUCT: u64 = 1005;
const INJECTED: i64 = 7;
/// Seeded products that read OK, drifted together.
const BURST: [u64; 6] = [1001, 1002, 1003, 1004, 1006, 1007];

/// The ticks the window received: when each reading was taken (`at`, ms since the epoch) and
/// when it arrived.
async fn ticks(c: &Client) -> Vec<(f64, f64)> {
    let v = c.execute("return window.__ticks || [];", vec![]).await.unwrap();
    serde_json::from_value(v).unwrap()
}

fn ms(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs_f64() * 1000.0
}

#[sqlx::test(migrations = "../migrations")]
async fn a_drift_notifies_badges_the_tray_and_its_acknowledgement_closes_itself_after_the_rewrite(pool: MySqlPool) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let redis = TestRedis::new("e2e-alerts").await;
    let (config, mysql_url) = seeded_sandbox(&pool, &redis).await;

    let desktop = DesktopBus::start().await;
    let _one_window = one_window_at_a_time().await;
    let (driver, client) =
        open_app_with(config.path(), "e2e-alerts", &[("DBUS_SESSION_BUS_ADDRESS", desktop.address.clone())]).await;

    let outcome = async {
        let c = &client;
        // The seeded incidents (1016-1020) fire first: wait until the tray counts them and
        // stays put, so the next change is the injected drift's.
        wait_attr(c, "#nav [data-screen=overview]", "class", "current", "connected: the overview first").await;
        click(c, "#nav [data-screen=board]").await;
        wait_text(c, "#products tbody tr[data-product-id] td.status", "the board fills", |t| t == "OVERSOLD").await;
        let settled = {
            let deadline = tokio::time::Instant::now() + STEP;
            let mut last = (String::new(), 0);
            loop {
                let label = desktop.tray_label().await.unwrap_or_default();
                let window = text_of(c, "#alerts-count").await.unwrap_or_default();
                if !label.is_empty() && label == window && label == last.0 {
                    last.1 += 1;
                    if last.1 >= 6 {
                        break label.parse::<usize>().unwrap();
                    }
                } else {
                    last = (label.clone(), 0);
                }
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "the tray never settled on the window's count (tray {label:?}, window {window:?})"
                );
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        };
        assert!(settled >= 4, "the seeded incidents alert: {settled}");
        let seeded_notes = desktop.notes().len();
        assert!(seeded_notes >= settled, "one notification per seeded alert: {seeded_notes} for {settled}");
        c.execute(
            "window.__ticks = []; window.__TAURI__.event.listen('board-tick', (e) => \
             window.__ticks.push([Date.parse(e.payload.at), Date.now()]));",
            vec![],
        )
        .await
        .unwrap();

        // 1. Drift injected behind the console's back.
        let mut r = redis::Client::open(redis.url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
        let injected_at = SystemTime::now();
        let _: i64 =
            redis::cmd("INCRBY").arg(redis.keys.stock(PRODUCT)).arg(INJECTED).query_async(&mut r).await.unwrap();

        // 2. A notification within two ticks, and the tray counts one more.
        let note = {
            let deadline = tokio::time::Instant::now() + STEP;
            loop {
                if let Some(n) = desktop.notes().into_iter().skip(seeded_notes).find(|n| n.summary.contains("1005")) {
                    break n;
                }
                assert!(tokio::time::Instant::now() < deadline, "no notification for the drift: {:?}", desktop.notes());
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        assert_eq!(note.summary, format!("Drift confirmed on product {PRODUCT}"));
        assert!(note.body.contains(&format!("+{INJECTED} units")), "{}", note.body);
        assert!(note.actions.iter().any(|a| a == "default"), "clicking it opens the product: {:?}", note.actions);
        let after: Vec<(f64, f64)> = ticks(c)
            .await
            .into_iter()
            .filter(|(at, arrived)| *at > ms(injected_at) && *arrived <= ms(note.at))
            .collect();
        assert!(
            (1..=2).contains(&after.len()),
            "the notification came after {} ticks read after the injection: {after:?}",
            after.len()
        );
        let badge = (settled + 1).to_string();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
        while desktop.tray_label().await.as_deref() != Some(badge.as_str()) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the tray shows {:?}, not {badge}, a second after the notification",
                desktop.tray_label().await
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        wait_text(c, "#alerts-count", "the window counts it too", |t| t == badge).await;

        // 3. Clicking the notification opens the product: the board narrowed to it, its chart.
        click(c, "#nav [data-screen=audit]").await;
        desktop.click(note.id).await;
        wait_text(c, "#chart-products", "the product's chart opens", |t| t == PRODUCT.to_string()).await;
        let search = c.find(Locator::Css("#search")).await.unwrap().prop("value").await.unwrap();
        assert_eq!(search.as_deref(), Some("1005"));

        // 4. Acknowledged in the window, with a reason, until it clears.
        click(c, "#alerts-toggle").await;
        let row = format!("#alerts-table tbody tr[data-key=\"drift:{PRODUCT}\"]");
        click(c, &format!("{row} button.ack")).await;
        type_into(c, "#ack-reason", "e2e: looking into the injected drift").await;
        screenshot(c, "alerts").await;
        click(c, "#ack-go").await;
        wait_text(c, &format!("{row} td.ack"), "the acknowledgement shows", |t| {
            t.contains("e2e: looking into the injected drift")
        })
        .await;
        let settled_label = settled.to_string();
        wait_text(c, "#alerts-count", "an acknowledged alert no longer counts", |t| t == settled_label).await;
        let deadline = tokio::time::Instant::now() + STEP;
        while desktop.tray_label().await.as_deref() != Some(settled_label.as_str()) {
            assert!(tokio::time::Instant::now() < deadline, "the tray still counts the acknowledged alert");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let (ack_id, acked_by): (u64, String) =
            sqlx::query_as("SELECT id, acked_by FROM alert_acks WHERE alert_key = ? AND closed_at IS NULL")
                .bind(format!("drift:{PRODUCT}"))
                .fetch_one(&pool)
                .await
                .expect("one open acknowledgement");
        let account = url::Url::parse(&mysql_url).unwrap().username().to_string();
        assert_eq!(acked_by, account, "the server's account, not the name the app acts as (e2e-alerts)");
        click(c, "#alerts-close").await;

        // 5. The fenced rewrite brings the drift to 0; the acknowledgement closes itself.
        click(c, "#nav [data-screen=board]").await;
        click(c, "#rewrite-selected").await;
        type_into(c, "#rw-reason", "e2e: repair the injected drift").await;
        click(c, "#rewrite").await;
        let result = format!("#rewrite-results tbody tr[data-product-id=\"{PRODUCT}\"]");
        wait_text(c, &format!("{result} td.outcome"), "the rewrite applies", |t| t == "APPLIED").await;
        let deadline = tokio::time::Instant::now() + STEP;
        let closed: (Option<String>,) = loop {
            let row: (Option<String>,) = sqlx::query_as("SELECT close_reason FROM alert_acks WHERE id = ?")
                .bind(ack_id)
                .fetch_one(&pool)
                .await
                .unwrap();
            if row.0.is_some() {
                break row;
            }
            assert!(tokio::time::Instant::now() < deadline, "the acknowledgement never closed");
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert_eq!(closed.0.as_deref(), Some("cleared"));
        let deadline = tokio::time::Instant::now() + STEP;
        while exists(c, &row).await {
            assert!(tokio::time::Instant::now() < deadline, "the cleared alert never left the panel");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }

        // 6. The audit log shows both, in the window.
        // The screen may show the rows it had before its own read comes back: wait until the
        // list holds the acknowledgement, then count.
        click(c, "#nav [data-screen=audit]").await;
        let about = |actions: &[String], what: &str| {
            actions.iter().filter(|a| a.contains(&format!("drift:{PRODUCT}")) && a.contains(what)).count()
        };
        let deadline = tokio::time::Instant::now() + STEP;
        let actions = loop {
            let actions: Vec<String> = serde_json::from_value(
                c.execute("return [...document.querySelectorAll('#audit tbody tr')].map(r => r.innerText);", vec![])
                    .await
                    .unwrap(),
            )
            .unwrap();
            if about(&actions, "ACKNOWLEDGED") > 0 && about(&actions, "CLOSED") > 0 {
                break actions;
            }
            assert!(tokio::time::Instant::now() < deadline, "the audit never listed both: {actions:#?}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert_eq!(about(&actions, "ACKNOWLEDGED"), 1, "{actions:#?}");
        assert_eq!(about(&actions, "CLOSED"), 1, "{actions:#?}");

        // 7. A burst (six products drifting at once) is one notification saying how many.
        let before = desktop.notes().len();
        // In one transaction: a reading sees all six or none.
        let mut burst_tx = redis::pipe();
        burst_tx.atomic();
        for p in BURST {
            burst_tx.cmd("INCRBY").arg(redis.keys.stock(p)).arg(1).ignore();
        }
        let _: () = burst_tx.query_async(&mut r).await.unwrap();
        let deadline = tokio::time::Instant::now() + STEP;
        let burst = loop {
            if let Some(n) = desktop.notes().into_iter().skip(before).find(|n| n.summary.contains("new alerts")) {
                break n;
            }
            assert!(tokio::time::Instant::now() < deadline, "no notification for the burst: {:?}", desktop.notes());
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert_eq!(burst.summary, format!("{} new alerts", BURST.len()));
        tokio::time::sleep(Duration::from_secs(2)).await;
        let one_by_one: Vec<String> = desktop.notes().into_iter().skip(before).map(|n| n.summary).collect();
        assert_eq!(one_by_one, std::slice::from_ref(&burst.summary), "no notification per product");
        let badge = (settled + BURST.len()).to_string();
        wait_text(c, "#alerts-count", "the window counts each of them", |t| t == badge).await;
    }
    .await;
    client.close().await.expect("session closes");
    drop(driver);
    outcome
}
