//! `stockguard timeline`: a sale driven through a rewrite, a degrade on and its guided exit, a
//! drift alert acknowledged and cleared, and a compensation case from open to executed, each
//! by the CLI as people would; the timeline lists every step, in order, with who and why.

use serde_json::Value;

use crate::commands::{sale_env, stockguard};
use crate::support::{self, accounts};

fn run(args: &[&str], env: &[(&'static str, String)]) -> std::process::Output {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    stockguard(args, &env)
}

fn ok(args: &[&str], env: &[(&'static str, String)]) -> String {
    let out = run(args, env);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn as_person(env: &[(&'static str, String)], mysql_url: String) -> Vec<(&'static str, String)> {
    let mut env: Vec<_> = env.iter().filter(|(k, _)| *k != "STOCKGUARD_MYSQL_URL").cloned().collect();
    env.push(("STOCKGUARD_MYSQL_URL", mysql_url));
    env
}

/// The sale's environment with a key prefix of this test's own.
async fn own_sale(pool: &sqlx::MySqlPool) -> (Vec<(&'static str, String)>, String) {
    let prefix = support::unique_prefix("tl");
    let mut env = sale_env(pool).await;
    env.retain(|(k, _)| *k != "STOCKGUARD_KEY_PREFIX");
    env.push(("STOCKGUARD_KEY_PREFIX", prefix.clone()));
    (env, prefix)
}

/// The events of `timeline --json` as (kind, outcome, actor, reason) with the whole event.
fn events(json: &str) -> Vec<Value> {
    let read: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    read["events"].as_array().cloned().unwrap_or_else(|| panic!("no events in {json}"))
}

fn text<'a>(e: &'a Value, field: &str) -> &'a str {
    e[field].as_str().unwrap_or("")
}

/// The position of the first event from `after` on of `kind` whose outcome or reason is `said`.
fn position(events: &[Value], after: usize, kind: &str, said: &str) -> usize {
    events
        .iter()
        .enumerate()
        .skip(after)
        .find(|(_, e)| text(e, "kind") == kind && (text(e, "outcome") == said || text(e, "reason") == said))
        .map(|(i, _)| i)
        .unwrap_or_else(|| panic!("no {kind} `{said}` after #{after} in {events:#?}"))
}

#[sqlx::test(migrations = "./migrations")]
async fn the_timeline_lists_each_step_of_an_incident_in_order_with_who_and_why(pool: sqlx::MySqlPool) {
    crate::support::oversold::seed(&pool, 5, 10, 0, 100, "T").await;
    crate::support::oversold::seed(&pool, 4, 2, 3, 999, "A").await;
    let (env, prefix) = own_sale(&pool).await;

    ok(&["rewrite", "--product", "5", "--reason", "stock the sale"], &env);
    ok(&["degrade", "on", "--product", "5", "--reason", "redis is slow", "--wait", "1"], &env);
    ok(&["degrade", "off", "--product", "5", "--reason", "redis is back", "--wait", "1"], &env);
    // Redis says three units more than the DB: a drift, confirmed by the two readings of `alerts`.
    let mut redis =
        redis::Client::open(support::redis_url()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let stock_key = stockguard_core::keys::Keys::new(prefix.as_str()).stock(5);
    let _: () = redis::cmd("SET").arg(&stock_key).arg(13).query_async(&mut redis).await.unwrap();
    ok(&["alerts", "ack", "drift:5", "--reason", "looking into it"], &env);
    ok(&["rewrite", "--product", "5", "--reason", "put the drift right"], &env);
    ok(&["alerts"], &env);
    let maker = as_person(&env, accounts::account(&pool, "tlmaker").await);
    let checker = as_person(&env, accounts::account(&pool, "tlcheck").await);
    let executor = as_person(&env, accounts::account(&pool, "tlexec").await);
    ok(&["compensation", "open", "--product", "4"], &maker);
    ok(&["compensation", "propose", "1", "--oversold", "cancel-refund", "--note", "refund A3"], &maker);
    ok(&["compensation", "approve", "1", "--reason", "the plan is right"], &checker);
    ok(&["compensation", "execute", "1", "--confirm", "1"], &executor);

    let events = events(&ok(&["timeline", "--since", "1h", "--json"], &env));
    let times: Vec<&str> = events.iter().map(|e| text(e, "at")).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "oldest first: {times:?}");

    let stocked = position(&events, 0, "rewrite", "stock the sale");
    let degraded = position(&events, stocked, "switch_change", "DEGRADED");
    let paused = position(&events, degraded, "switch_change", "PAUSED");
    let normal = position(&events, paused, "switch_change", "NORMAL");
    let exited = position(&events, normal, "guided_exit", "COMPLETED");
    let acked = position(&events, exited, "alert_acknowledged", "looking into it");
    let repaired = position(&events, acked, "rewrite", "put the drift right");
    let cleared = position(&events, repaired, "alert_ack_closed", "CLEARED");
    let opened = position(&events, cleared, "compensation_step", "OPEN");
    let proposed = position(&events, opened, "compensation_step", "PROPOSE");
    let approved = position(&events, proposed, "compensation_step", "APPROVE");
    let executed = position(&events, approved, "compensation_step", "EXECUTED");
    assert!(executed > approved);

    // Who is the server's word: the account each command connected as.
    for at in [stocked, degraded, exited, acked, repaired] {
        assert_eq!(text(&events[at], "actor"), "root", "{:#}", events[at]);
    }
    assert!(text(&events[opened], "actor").contains("tlmaker"), "{:#}", events[opened]);
    assert!(text(&events[approved], "actor").contains("tlcheck"), "{:#}", events[approved]);
    assert_eq!(text(&events[approved], "reason"), "the plan is right");
    assert_eq!(text(&events[degraded], "reason"), "redis is slow");
    assert_eq!(events[degraded]["product_id"], 5);
    assert_eq!(events[degraded]["record"]["table"], "switch_changes");
    assert!(events[degraded]["audit_id"].is_u64(), "the switch change's audit row is linked: {:#}", events[degraded]);
    assert_eq!(events[repaired]["record"]["table"], "rewrite_runs");
    assert!(text(&events[repaired], "detail").starts_with("before 13, after 10"), "{:#}", events[repaired]);
    assert_eq!(events[acked]["record"]["table"], "alert_acks");
    for at in [acked, cleared, opened, approved, repaired] {
        assert!(events[at]["audit_id"].is_u64(), "its audit row is linked: {:#}", events[at]);
    }
    assert_eq!(events[opened]["product_id"], 4);

    // One product: its own events and the whole sale's, none of another product's.
    let of_4 = self::events(&ok(&["timeline", "--since", "1h", "--product", "4", "--json"], &env));
    assert!(of_4.iter().any(|e| text(e, "kind") == "compensation_step"), "{of_4:#?}");
    assert!(of_4.iter().all(|e| e["product_id"].is_null() || e["product_id"] == 4), "{of_4:#?}");
    accounts::forget(&pool).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn the_markdown_page_sums_up_the_window_and_tables_each_event(pool: sqlx::MySqlPool) {
    crate::support::oversold::seed(&pool, 5, 10, 0, 100, "M").await;
    let (env, _) = own_sale(&pool).await;
    ok(&["degrade", "on", "--product", "5", "--reason", "redis is slow", "--wait", "1"], &env);
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("incident.md");
    let page_arg = page.to_str().unwrap();
    ok(&["timeline", "--since", "1h", "--format", "md", "--out", page_arg], &env);
    let md = std::fs::read_to_string(&page).unwrap();
    assert!(md.contains("- Events: 1 (switch change 1)"), "{md}");
    assert!(md.contains("| root | redis is slow | DEGRADED | product:5, revision 1 | switch_changes#1 |"), "{md}");

    ok(&["timeline", "--since", "1h", "--format", "md", "--lang", "zh", "--out", page_arg], &env);
    let zh = std::fs::read_to_string(&page).unwrap();
    assert!(zh.contains("降级开关变更") && zh.contains("| 时间 | 类型 |"), "{zh}");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_window_in_the_past_lists_nothing_of_now(pool: sqlx::MySqlPool) {
    crate::support::oversold::seed(&pool, 5, 10, 0, 100, "P").await;
    let (env, _) = own_sale(&pool).await;
    ok(&["degrade", "on", "--product", "5", "--reason", "redis is slow", "--wait", "1"], &env);
    let past = ok(&["timeline", "--from", "2020-01-01T00:00:00Z", "--to", "2020-01-02T00:00:00Z"], &env);
    assert!(past.contains("nothing happened between 2020-01-01 00:00:00 and 2020-01-02 00:00:00"), "{past}");
    let now = ok(&["timeline"], &env);
    assert!(now.contains("switch_change") && now.contains("redis is slow"), "{now}");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_limit_keeps_the_newest_events_and_says_older_ones_were_left_out(pool: sqlx::MySqlPool) {
    crate::support::oversold::seed(&pool, 5, 10, 0, 100, "L").await;
    let (env, _) = own_sale(&pool).await;
    ok(&["degrade", "on", "--product", "5", "--reason", "first", "--wait", "1"], &env);
    ok(&["degrade", "on", "--reason", "second, the whole sale", "--wait", "1"], &env);
    let newest = events(&ok(&["timeline", "--limit", "1", "--json"], &env));
    assert_eq!(newest.len(), 1, "{newest:#?}");
    assert_eq!(text(&newest[0], "reason"), "second, the whole sale");
    assert!(newest[0]["product_id"].is_null(), "a global change concerns the whole sale: {:#}", newest[0]);
    let table = ok(&["timeline", "--limit", "1"], &env);
    assert!(table.contains("older events of the window left out: at most 1 listed"), "{table}");
    // One product's timeline keeps the whole sale's changes beside its own.
    let of_5 = events(&ok(&["timeline", "--product", "5", "--json"], &env));
    let reasons: Vec<&str> = of_5.iter().map(|e| text(e, "reason")).collect();
    assert_eq!(reasons, vec!["first", "second, the whole sale"], "{of_5:#?}");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_drill_run_is_listed_from_its_start_through_its_faults_to_its_verdict(pool: sqlx::MySqlPool) {
    use crate::support::drill_run;
    let run = drill_run::failed_redis_down_run(&pool).await;
    let (env, _) = own_sale(&pool).await;
    let events = events(&ok(&["timeline", "--json"], &env));
    let said: Vec<(&str, &str)> = events.iter().map(|e| (text(e, "kind"), text(e, "outcome"))).collect();
    assert_eq!(
        said,
        vec![
            ("drill_started", "RUNNING"),
            ("drill_fault", "INJECTED"),
            ("drill_fault", "RESTORED"),
            ("drill_verdict", "FAILED")
        ],
        "{events:#?}"
    );
    assert_eq!(text(&events[1], "reason"), drill_run::FAULT);
    assert_eq!(text(&events[1], "detail"), "drill redis-down: redis down");
    assert_eq!(events[3]["record"], serde_json::json!({ "table": "drill_runs", "id": run }));
}
