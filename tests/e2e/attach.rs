//! "Attach a sale" in the real window: a course-shaped sale with a Redis stream (the adapter
//! tests' own, `tests/adapters/sales/`), attached through the wizard on the Connections screen.
//! A wrong column is said in its own field, in English and in Chinese (both photographed); the
//! fixed form previews the first products with no drift; the save lists the profile, writes
//! the adapter file beside the profiles file and records the baselines in the state database.
//! The open wizard passes axe-core in both languages and says no English word in Chinese.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use sqlx::MySqlPool;

use crate::accessibility::{axe, axe_source, no_english};
use crate::sales::course_stream::CourseStreamSale;
use crate::sales::Traffic;
use crate::{choose, click, one_window_at_a_time, open_app, screenshot, support, type_into, wait_text};

/// Photographs the window with the element `css` at its top (the wizard is longer than it).
async fn photograph_at(c: &fantoccini::Client, css: &str, name: &str) {
    c.execute("document.querySelector(arguments[0]).scrollIntoView()", vec![serde_json::json!(css)])
        .await
        .unwrap_or_else(|e| panic!("scroll to {css}: {e}"));
    screenshot(c, name).await;
}

#[sqlx::test(migrations = "../migrations")]
async fn a_stream_sale_is_attached_through_the_wizard_and_its_wrong_column_said_in_both_languages(state: MySqlPool) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let sale = Arc::new(CourseStreamSale::start(&[(1, 20), (2, 20)]).await);
    assert_eq!(Traffic::buyers(8).on(&[1, 2]).run(&sale).await.accepted, 8);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while sale.orders(1).await + sale.orders(2).await < 8 {
        assert!(tokio::time::Instant::now() < deadline, "the sale's consumer never wrote its 8 orders");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let state_url = support::mysql_url_of(&state).await;
    let config = tempfile::tempdir().unwrap();
    // What the wizard shows as it is in both languages: the sale's own names, the products and
    // the command it names, and the `${id}` of a key template.
    let names: BTreeSet<String> =
        [&sale.prefix, "seckill", "stock", "stok", "order", "stream", "orders", "id", "RabbitMQ", "SCAN", "Stockguard"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let (axe_js, mut found) = (axe_source(), Vec::new());

    let _one_window = one_window_at_a_time().await;
    let (driver, client) = open_app(config.path(), "e2e-attach").await;
    // A failed step panics here; the window's session is closed by its drop.
    async {
        let c = &client;
        // No profile yet: the window opens on Connections.
        click(c, "#nav [data-screen=connections]").await;
        click(c, "#attach-open").await;
        type_into(c, "#attach-where [name=mysqlUrl]", &sale.db.url).await;
        type_into(c, "#attach-where [name=redisUrl]", &support::redis_url()).await;
        type_into(c, "#attach-where [name=keys]", &format!("{}*", sale.prefix)).await;
        type_into(c, "#attach-where [name=stateUrl]", &state_url).await;
        click(c, "#attach-read").await;
        // The statuses found, each with its orders counted; then the reading of the proposal.
        wait_text(c, "#attach-statuses tbody tr[data-status=\"1\"] td.orders", "status 1 counted", |t| t == "8").await;
        for product in [1, 2] {
            let status = format!("#attach-preview tbody tr[data-product=\"{product}\"] td.status");
            wait_text(c, &status, "the proposal reads OK", |t| t == "OK").await;
            let drift = format!("#attach-preview tbody tr[data-product=\"{product}\"] td.drift");
            wait_text(c, &drift, "with no drift", |t| t == "0").await;
        }
        photograph_at(c, "#attach-form", "attach").await;
        photograph_at(c, "#attach-redis", "attach-preview").await;
        axe(c, &axe_js, "the proposal (en)", &mut found).await;
        click(c, "#lang-toggle").await;
        wait_text(c, "#attach-preview tbody tr[data-product=\"1\"] td.status", "the preview in Chinese", |t| {
            t == "正常"
        })
        .await;
        axe(c, &axe_js, "the proposal (zh)", &mut found).await;
        no_english(c, "the proposal (zh)", &names, &mut found).await;
        photograph_at(c, "#attach-form", "attach-zh").await;
        photograph_at(c, "#attach-redis", "attach-preview-zh").await;
        click(c, "#lang-toggle").await;

        // A column the stock table does not have, said in its own field.
        type_into(c, "#attach-form [name=stock_remaining]", "stok").await;
        let error = "[data-error-for=stock_remaining]";
        wait_text(c, error, "the wrong column is said in its field", |t| t.contains("no column stok")).await;
        wait_text(c, "#attach-preview-state", "and nothing is read through it", |t| t.starts_with("Correct")).await;
        photograph_at(c, "#attach-stock", "attach-wrong-column").await;
        click(c, "#lang-toggle").await;
        wait_text(c, error, "in Chinese too", |t| t.contains("该表没有列 stok")).await;
        axe(c, &axe_js, "a wrong column (zh)", &mut found).await;
        no_english(c, "a wrong column (zh)", &names, &mut found).await;
        photograph_at(c, "#attach-stock", "attach-wrong-column-zh").await;
        click(c, "#lang-toggle").await;

        // Fixed, it reads again; saved as a profile.
        type_into(c, "#attach-form [name=stock_remaining]", "stock").await;
        wait_text(c, error, "the field is clean again", str::is_empty).await;
        wait_text(c, "#attach-preview tbody tr[data-product=\"1\"] td.status", "it reads again", |t| t == "OK").await;
        type_into(c, "#attach-form [name=profileName]", "course").await;
        choose(c, "#attach-form [name=environment]", "sandbox").await;
        type_into(c, "#attach-form [name=reason]", "attached in the e2e test").await;
        click(c, "#attach-save").await;
        wait_text(c, "#notice", "saved, with its baselines", |t| {
            t.contains("Profile course saved") && t.contains("2 baselines")
        })
        .await;
        wait_text(c, "#profiles tbody tr[data-profile=course] td.name", "the profile is listed", |t| {
            t.starts_with("course")
        })
        .await;
    }
    .await;
    client.close().await.expect("session closes");
    drop(driver);
    assert!(found.is_empty(), "the wizard:\n{}", found.join("\n"));
    let adapter = config.path().join("course.adapter.toml");
    assert!(stockguard_core::adapter::AdapterFile::load(&adapter).is_ok(), "{} is an adapter file", adapter.display());
    let baselines: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM adapter_baselines").fetch_one(&state).await.unwrap();
    assert_eq!(baselines, 2);
    sale.cleanup().await;
}
