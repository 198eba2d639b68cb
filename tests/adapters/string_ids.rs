//! A sale whose product ids are text (`VARCHAR` keys such as `'SKU-A'`): every product read as
//! itself everywhere an adapter sale goes, through the CLI: the reading and its JSON, a drift
//! alerted and acknowledged, baselines, the repair (the key the file's template makes from the
//! id's text), the lost orders and a compensation case (issue 47: every such product read as
//! product 0, three rows with wrong figures, and baselines written for them). A product column
//! of a type no id is read from is refused in one line, with nothing written.

use std::process::Output;

use serde_json::{json, Value};
use sqlx::MySqlPool;

use crate::cli::{adapter_env_of, stockguard};
use crate::compensation::{json, refused, run, People};
use crate::sales::sku_stream::SkuStreamSale;
use crate::sales::{redis_conn, redis_int, sale_prefix, Leftovers, SaleDb};

const GOODS: &[(&str, i64)] = &[("SKU-A", 10), ("SKU-B", 20), ("SKU-10", 30)];

/// The sale's adapter file, written in `dir`, and the environment that reads the sale through
/// it: a SELECT-only account on the sale's database, `state` as Stockguard's own.
async fn env_for(sale: &SkuStreamSale, dir: &std::path::Path, state: &MySqlPool) -> Vec<(&'static str, String)> {
    adapter_env_of(&sale.adapter_toml(), &sale.db, dir, state).await
}

/// Runs the CLI; its stdout, after it succeeded.
fn ok(args: &[&str], env: &[(&str, &str)]) -> String {
    let run = stockguard(args, env);
    let (out, err) = said(&run);
    assert!(run.status.success(), "{args:?}: {out}{err}");
    out
}

fn said(run: &Output) -> (String, String) {
    (String::from_utf8_lossy(&run.stdout).into_owned(), String::from_utf8_lossy(&run.stderr).into_owned())
}

/// `recon --json`, every product settled (the sale is quiet: its consumer stepped by hand).
fn recon(env: &[(&str, &str)]) -> Vec<Value> {
    let out = ok(&["recon", "--json"], env);
    let readings: Value = serde_json::from_str(&out).expect("recon --json prints JSON");
    let readings = readings.as_array().unwrap().clone();
    assert!(readings.iter().all(|r| r["settled"] == json!(true)), "{out}");
    readings
}

/// One product's figures as `recon --json` shows them: status, drift, DB stock, live units,
/// Redis, initial stock.
fn figures(readings: &[Value], id: &str) -> (String, i64, i64, i64, i64, i64) {
    let r = readings.iter().find(|r| r["product_id"] == json!(id)).unwrap_or_else(|| panic!("{id} is read"));
    let n = |f: &str| r[f].as_i64().unwrap_or_else(|| panic!("{f} of {r}"));
    (
        r["status"].as_str().unwrap().into(),
        n("drift"),
        n("db_stock"),
        n("live_orders_qty"),
        n("redis_stock"),
        n("initial_stock"),
    )
}

#[sqlx::test(migrations = false)]
async fn a_sale_keyed_by_text_reads_alerts_baselines_and_repairs_each_product_as_itself(state: MySqlPool) {
    let sale = SkuStreamSale::start(GOODS).await;
    for (sku, user) in [("SKU-A", 1), ("SKU-A", 2), ("SKU-10", 3)] {
        assert!(sale.buy(sku, user).await.is_some(), "{sku} sells");
    }
    sale.drain().await;
    let dir = tempfile::tempdir().unwrap();
    let owned = env_for(&sale, dir.path(), &state).await;
    let env: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();

    // Baselines for the three SKUs, each kept as itself (its text, and that it is text).
    ok(&["adapter", "baseline", "--reason", "sale opens"], &env);
    let kept: Vec<(String, bool, i64)> =
        sqlx::query_as("SELECT product_id, product_is_text, initial_stock FROM adapter_baselines ORDER BY product_id")
            .fetch_all(&state)
            .await
            .unwrap();
    let text = |s: &str, n| (s.to_string(), true, n);
    assert_eq!(kept, [text("SKU-10", 30), text("SKU-A", 10), text("SKU-B", 20)]);

    // The reading: each SKU a string in the JSON with its own figures, in id order (text order:
    // SKU-10 before SKU-A), each from its recorded baseline.
    let readings = recon(&env);
    let ids: Vec<&Value> = readings.iter().map(|r| &r["product_id"]).collect();
    assert_eq!(ids, [&json!("SKU-10"), &json!("SKU-A"), &json!("SKU-B")]);
    assert!(readings.iter().all(|r| r["initial_source"] == json!("baseline")), "{readings:?}");
    assert_eq!(figures(&readings, "SKU-A"), ("OK".into(), 0, 8, 2, 8, 10));
    assert_eq!(figures(&readings, "SKU-B"), ("OK".into(), 0, 20, 0, 20, 20));
    assert_eq!(figures(&readings, "SKU-10"), ("OK".into(), 0, 29, 1, 29, 30));

    // A real drift: three units Redis took that no order holds, found as SKU-B and no other.
    sale.lose_after_redis("SKU-B", 3).await;
    let readings = recon(&env);
    assert_eq!(readings[0]["product_id"], json!("SKU-B"), "the drift first");
    assert_eq!(figures(&readings, "SKU-B"), ("REDIS_LOW".into(), -3, 20, 0, 17, 20));
    assert_eq!(figures(&readings, "SKU-A").0, "OK");
    let firing: Value = serde_json::from_str(&ok(&["alerts", "--json"], &env)).expect("alerts --json prints JSON");
    let alerts: Vec<(&Value, &Value, &Value)> = firing
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (&a["alert"]["key"], &a["alert"]["product_id"], &a["alert"]["value"]))
        .collect();
    assert_eq!(alerts, [(&json!("drift:SKU-B"), &json!("SKU-B"), &json!(-3))]);
    let ack: Value =
        serde_json::from_str(&ok(&["alerts", "ack", "drift:SKU-B", "--reason", "looking at SKU-B", "--json"], &env))
            .expect("alerts ack --json prints JSON");
    assert_eq!(ack["product_id"], json!("SKU-B"), "{ack}");
    let (acked, is_text): (String, bool) =
        sqlx::query_as("SELECT product_id, product_is_text FROM alert_acks").fetch_one(&state).await.unwrap();
    assert_eq!((acked.as_str(), is_text), ("SKU-B", true));

    // The repair: the dry run names the exact command, which writes the SKU's own key.
    let dry = ok(&["adapter", "repair", "--product", "SKU-B", "--dry-run"], &env);
    assert!(dry.contains("--product SKU-B --expect-drift -3"), "{dry}");
    let done: Value = serde_json::from_str(&ok(
        &[
            "adapter",
            "repair",
            "--product",
            "SKU-B",
            "--reason",
            "units lost after Redis",
            "--expect-drift",
            "-3",
            "--json",
        ],
        &env,
    ))
    .expect("adapter repair --json prints JSON");
    assert_eq!((&done[0]["product_id"], &done[0]["key"]), (&json!("SKU-B"), &json!(sale.stock_key("SKU-B"))));
    let mut redis = redis_conn().await;
    assert_eq!(redis_int(&mut redis, &sale.stock_key("SKU-B")).await, Some(20), "the SKU's own key, read back");
    assert_eq!(redis_int(&mut redis, &sale.stock_key("SKU-A")).await, Some(8), "no other key moved");
    let readings = recon(&env);
    assert!(readings.iter().all(|r| r["status"] == json!("OK")), "{readings:?}");
    sale.cleanup().await;
}

#[sqlx::test(migrations = false)]
async fn an_order_a_consumer_acknowledged_without_its_row_is_lost_under_its_text_id(state: MySqlPool) {
    let sale = SkuStreamSale::start(GOODS).await;
    sale.buy("SKU-A", 1).await.expect("SKU-A sells");
    let lost = sale.buy("SKU-10", 2).await.expect("SKU-10 sells");
    sale.consume_next().await.expect("SKU-A's entry becomes its row");
    assert_eq!(sale.swallow_next().await, lost, "SKU-10's entry is acknowledged without its row");
    let dir = tempfile::tempdir().unwrap();
    let owned = env_for(&sale, dir.path(), &state).await;
    let env: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();

    let out = ok(&["adapter", "lost"], &env);
    assert!(out.lines().next().unwrap().starts_with(&format!("product SKU-10  order {lost}  entry ")), "{out}");
    let scan: Value = serde_json::from_str(&ok(&["adapter", "lost", "--json"], &env)).expect("JSON");
    let orders: Vec<(&Value, &Value)> =
        scan["orders"].as_array().unwrap().iter().map(|o| (&o["product_id"], &o["order_id"])).collect();
    assert_eq!(orders, [(&json!("SKU-10"), &json!(lost))]);
    // Its unit: Redis took it and no row holds it, under the SKU's own id.
    let readings = recon(&env);
    let r = readings.iter().find(|r| r["product_id"] == json!("SKU-10")).unwrap();
    assert_eq!((&r["status"], &r["drift"], &r["lost"]["order_ids"]), (&json!("REDIS_LOW"), &json!(-1), &json!([lost])));
    sale.cleanup().await;
}

#[sqlx::test(migrations = false)]
async fn a_case_over_the_adapter_of_a_text_id_is_opened_proposed_approved_and_executed_by_three_accounts(
    state: MySqlPool,
) {
    let sale = SkuStreamSale::start(GOODS).await;
    for user in 1..=10 {
        sale.buy("SKU-A", user).await.expect("SKU-A sells its ten units");
    }
    assert!(sale.buy("SKU-A", 11).await.is_none(), "and no more");
    sale.drain().await;
    let root_url = crate::support::mysql_url_of(&state).await;
    stockguard_core::adapter::state::open(&root_url).await.expect("the state database is migrated");
    let people = People::new();
    people.apply(&state).await;
    let dir = tempfile::tempdir().unwrap();
    let as_who = async |url: String| {
        let mut env = env_for(&sale, dir.path(), &state).await;
        env[4].1 = url;
        env
    };
    run(&["adapter", "baseline", "--reason", "the sale opens"], &as_who(root_url.clone()).await);
    // The sale's own bug: two orders of SKU-A beyond its ten units.
    sale.oversell("SKU-A", 2).await;
    let mut beyond = vec![format!("{}-over-0", sale.prefix), format!("{}-over-1", sale.prefix)];
    beyond.sort();

    let maker = as_who(people.url(&state, "mak").await).await;
    let opened = json(&run(&["compensation", "open", "--product", "SKU-A", "--json"], &maker));
    let id = opened["case_id"].as_u64().expect("a case is opened").to_string();
    let case = json(&run(&["compensation", "show", &id, "--json"], &maker));
    assert_eq!(case["product_id"], json!("SKU-A"), "{case}");
    let mut lines: Vec<String> =
        case["lines"].as_array().unwrap().iter().map(|l| l["order_no"].as_str().unwrap().to_string()).collect();
    lines.sort();
    assert_eq!(lines, beyond, "exactly the orders beyond SKU-A's stock");
    let listed = json(&run(&["compensation", "list", "--json"], &maker));
    assert_eq!(listed[0]["product_id"], json!("SKU-A"), "{listed}");
    let kept: (String, bool) =
        sqlx::query_as("SELECT product_id, product_is_text FROM compensation_cases WHERE id = ?")
            .bind(id.parse::<u64>().unwrap())
            .fetch_one(&state)
            .await
            .unwrap();
    assert_eq!(kept, ("SKU-A".to_string(), true));

    // The triggers hold a text id as they hold a number: no line of another product's order, by
    // raw SQL on the maker's own account.
    let maker_pool = MySqlPool::connect(&people.url(&state, "mak").await).await.unwrap();
    let name = format!("skus-{}", sale.prefix);
    sqlx::query(
        "INSERT INTO adapter_orders (sale, order_no, kind, product_id, product_is_text, user_id, qty, created_at) \
         VALUES (?, 'b-1', 'OVERSOLD', 'SKU-B', TRUE, 5, 1, NOW(3))",
    )
    .bind(&name)
    .execute(&maker_pool)
    .await
    .expect("an order read from the sale is recorded");
    let other = refused(
        &maker_pool,
        &format!("INSERT INTO compensation_lines (case_id, order_no, reason) VALUES ({id}, 'b-1', 'OVERSOLD')"),
    )
    .await;
    assert!(other.contains("a line is an order of the case's product"), "{other}");
    maker_pool.close().await;

    run(&["compensation", "propose", &id, "--oversold", "cancel-refund", "--note", "beyond stock"], &maker);
    let checker = as_who(people.url(&state, "chk").await).await;
    let approved = json(&run(&["compensation", "approve", &id, "--reason", "checked", "--json"], &checker));
    assert_eq!(approved["status"], "APPROVED");
    let executor = as_who(people.url(&state, "exe").await).await;
    let ran = json(&run(&["compensation", "execute", &id, "--confirm", &id, "--json"], &executor));
    assert_eq!(ran["after"]["status"], "EXECUTED", "{ran}");
    let outcomes: Vec<&Value> = ran["lines"].as_array().unwrap().iter().map(|l| &l["result"]).collect();
    assert_eq!(outcomes, [&json!("done"), &json!("done")], "{ran}");
    // Every step audited with the product as itself: a string.
    let audited: Vec<(String, String)> = sqlx::query_as(
        "SELECT CAST(JSON_UNQUOTE(JSON_EXTRACT(details, '$.product_id')) AS CHAR), \
                CAST(JSON_TYPE(JSON_EXTRACT(details, '$.product_id')) AS CHAR) \
         FROM audit_log WHERE target = ? AND role = 'db' AND action LIKE 'compensation.%'",
    )
    .bind(format!("case:{id}"))
    .fetch_all(&state)
    .await
    .unwrap();
    assert!(audited.len() >= 4, "{audited:?}");
    assert!(audited.iter().all(|(p, t)| p == "SKU-A" && t == "STRING"), "{audited:?}");
    people.forget(&state).await;
    sale.cleanup().await;
}

/// A sale whose product column is `column_type`, with two products `'17'` and `'18'`.
async fn sale_keyed_by(column_type: &str) -> (String, SaleDb, Leftovers) {
    let prefix = sale_prefix("idtype");
    let leftovers = Leftovers::new(&prefix, true, None);
    let db = SaleDb::create(
        &prefix,
        &[
            &format!("CREATE TABLE goods (code {column_type} NOT NULL PRIMARY KEY, stock INT NOT NULL)"),
            "INSERT INTO goods VALUES ('17', 5), ('18', 5)",
            &format!("CREATE TABLE orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, code {column_type} NOT NULL, status INT NOT NULL)"),
        ],
    )
    .await;
    let file = format!(
        r#"[sale]
name = "idtype-{prefix}"
[stock]
table = "goods"
product = "code"
remaining = "stock"
initial = "baseline"
[orders]
table = "orders"
product = "code"
quantity = 1
status = "status"
live = [1]
[redis]
stock = "{prefix}:stock:${{id}}"
"#
    );
    (file, db, leftovers)
}

#[sqlx::test(migrations = false)]
async fn a_product_column_of_a_type_no_id_is_read_from_is_refused_in_one_line_and_nothing_is_written(state: MySqlPool) {
    let state_url = crate::support::mysql_url_of(&state).await;
    stockguard_core::adapter::state::open(&state_url).await.expect("the state database is migrated");
    for (column_type, refusal) in [
        ("VARBINARY(16)", "goods.code is a varbinary(16) column"),
        ("DECIMAL(6,2)", "goods.code is a decimal(6,2) column"),
    ] {
        let (file, db, leftovers) = sale_keyed_by(column_type).await;
        let dir = tempfile::tempdir().unwrap();
        let adapter = dir.path().join("idtype.toml");
        std::fs::write(&adapter, file).unwrap();
        let redis_url = crate::support::redis_url();
        let env = [
            ("STOCKGUARD_MYSQL_URL", db.url.as_str()),
            ("STOCKGUARD_REDIS_URL", redis_url.as_str()),
            ("STOCKGUARD_ENVIRONMENT", "sandbox"),
            ("STOCKGUARD_ADAPTER", adapter.to_str().unwrap()),
            ("STOCKGUARD_STATE_URL", state_url.as_str()),
        ];
        for args in [&["adapter", "baseline", "--reason", "sale opens"][..], &["recon", "--json"]] {
            let run = stockguard(args, &env);
            let (out, err) = said(&run);
            assert!(!run.status.success(), "{column_type} {args:?}: {out}{err}");
            assert_eq!(err.trim().lines().count(), 1, "{column_type} {args:?}: one line: {err}");
            assert!(err.contains(refusal) && err.contains("nothing was read"), "{column_type} {args:?}: {err}");
            assert!(out.is_empty(), "{column_type} {args:?}: {out}");
        }
        let written: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM adapter_baselines").fetch_one(&state).await.unwrap();
        assert_eq!(written, 0, "{column_type}: no baseline is written");
        db.pool.close().await;
        leftovers.remove().await;
    }
}
