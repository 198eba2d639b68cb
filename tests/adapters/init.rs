//! `stockguard adapter init` on sales it has never seen: the proposal names their own stock
//! table, orders, keys and stream, marks what only a person can settle (which statuses hold a
//! unit), and once that is settled `adapter check` passes on it. It reads only: through a
//! SELECT-only account, the sale's tables are as they were, and an existing file is never
//! overwritten.

use std::process::Output;
use std::sync::Arc;

use crate::cli::stockguard;
use crate::sales::course_stream::CourseStreamSale;
use crate::sales::mall_lock::MallLockSale;
use crate::sales::Traffic;

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The proposal with every status found moved where the sale's own code says it belongs.
fn settle(proposal: &str, live: &str, released: &str) -> String {
    proposal
        .lines()
        // What the person decided is no longer undecided.
        .filter(|l| !l.starts_with("# UNDECIDED"))
        .map(|l| {
            if l.starts_with("live = ") {
                format!("live = {live}")
            } else if l.starts_with("released = ") {
                format!("released = {released}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn init_proposes_the_course_sales_tables_keys_and_stream_and_its_settled_file_checks() {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 20), (2, 20)]).await);
    assert_eq!(Traffic::buyers(10).on(&[1, 2]).run(&sale).await.accepted, 10);
    // Its consumer writes the rows behind the answers: init counts them once they are there.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    while sale.orders(1).await + sale.orders(2).await < 10 {
        assert!(tokio::time::Instant::now() < deadline, "the sale's consumer never wrote its 10 orders");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let dir = tempfile::tempdir().unwrap();
    let proposed = dir.path().join("proposed.toml");
    let (read_only, redis) = (sale.db.select_only_url().await, crate::support::redis_url());
    let env = [
        ("STOCKGUARD_MYSQL_URL", read_only.as_str()),
        ("STOCKGUARD_REDIS_URL", redis.as_str()),
        ("STOCKGUARD_ENVIRONMENT", "sandbox"),
    ];
    let tables = sale.db.tables().await;
    let pattern = format!("{}*", sale.prefix);
    let args = ["adapter", "init", "--keys", &pattern, "--out", proposed.to_str().unwrap()];

    let init = stockguard(&args, &env);
    assert!(init.status.success(), "{}", text(&init));
    assert_eq!(sale.db.tables().await, tables, "init changed the sale's tables");
    let proposal = std::fs::read_to_string(&proposed).unwrap();
    let p = &sale.prefix;
    for line in [
        "table = \"tb_seckill_voucher\"".to_string(),
        "product = \"voucher_id\"".into(),
        "remaining = \"stock\"".into(),
        "initial = \"baseline\"".into(),
        "table = \"tb_voucher_order\"".into(),
        "status = \"status\"".into(),
        "created = \"create_time\"".into(),
        "user = \"user_id\"".into(),
        format!("stock = \"{p}:seckill:stock:${{id}}\""),
        format!("stream = \"{p}:stream.orders\""),
        "group = \"g1\"".into(),
        "product_field = \"voucherId\"".into(),
        "order_id_field = \"id\"".into(),
    ] {
        assert!(proposal.lines().any(|l| l.starts_with(&line)), "no `{line}` in:\n{proposal}");
    }
    assert!(proposal.contains(&format!("buyers = \"{p}:seckill:order:${{id}}\"")), "{proposal}");
    // Only the sale's own code knows what a status means: init counts, it does not decide.
    let said = text(&init);
    assert!(said.contains("which statuses hold a unit") && said.contains("(10 orders)"), "{said}");
    assert!(proposal.contains("# UNDECIDED: which statuses hold a unit"), "{proposal}");

    // As proposed, the file parses but does not check: each UNDECIDED line is named.
    let check = stockguard(&["--adapter", proposed.to_str().unwrap(), "adapter", "check"], &env);
    assert!(!check.status.success(), "a proposal as written does not check: {}", text(&check));
    assert!(text(&check).contains("is still UNDECIDED (which statuses hold a unit"), "{}", text(&check));

    // Settled as the sale's code says (1 unpaid, 2 paid, 3 used, 5 refunding live; 4, 6 gave the
    // unit back), the file checks.
    let settled = dir.path().join("settled.toml");
    std::fs::write(&settled, settle(&proposal, "[1, 2, 3, 5]", "[4, 6]")).unwrap();
    let check = stockguard(&["--adapter", settled.to_str().unwrap(), "adapter", "check"], &env);
    assert!(check.status.success(), "{}", text(&check));
    assert!(text(&check).contains("everything the adapter names exists"), "{}", text(&check));

    // A second init does not write over the file a person may have edited.
    std::fs::write(&proposed, "# edited by hand\n").unwrap();
    let again = stockguard(&args, &env);
    assert!(!again.status.success(), "{}", text(&again));
    assert!(text(&again).contains("exists"), "{}", text(&again));
    assert_eq!(std::fs::read_to_string(&proposed).unwrap(), "# edited by hand\n");
}

#[tokio::test]
async fn init_finds_a_malls_locked_stock_and_the_order_its_items_belong_to() {
    let sale = Arc::new(MallLockSale::start(&[(1, 10), (2, 10)]).await);
    assert_eq!(Traffic::buyers(6).on(&[1, 2]).run(&sale).await.accepted, 6);
    let read_only = sale.db.select_only_url().await;
    let redis = crate::support::redis_url();
    let env = [
        ("STOCKGUARD_MYSQL_URL", read_only.as_str()),
        ("STOCKGUARD_REDIS_URL", redis.as_str()),
        ("STOCKGUARD_ENVIRONMENT", "sandbox"),
    ];
    // The mall keeps nothing in Redis: a pattern of its own finds no key.
    let pattern = format!("{}*", sale.prefix);
    let init = stockguard(&["adapter", "init", "--keys", &pattern, "--json"], &env);
    assert!(init.status.success(), "{}", text(&init));
    let proposal: serde_json::Value = serde_json::from_slice(&init.stdout).expect("init --json prints JSON");
    let file = proposal["text"].as_str().unwrap();
    for line in [
        "table = \"pms_sku_stock\"",
        "reserved = \"lock_stock\"",
        "table = \"oms_order_item\"",
        "product = \"product_sku_id\"",
        "quantity_column = \"product_quantity\"",
        "join = { table = \"oms_order\", on = \"order_id\", key = \"id\" }",
        "user = \"member_id\"",
        "source = \"none\"",
    ] {
        assert!(file.lines().any(|l| l.starts_with(line)), "no `{line}` in:\n{file}");
    }
    assert!(!file.contains("[redis]"), "{file}");
    let undecided: Vec<&str> = proposal["undecided"].as_array().unwrap().iter().map(|u| u.as_str().unwrap()).collect();
    assert!(undecided.iter().any(|u| u.contains("no Redis key per product")), "{undecided:?}");
    assert!(undecided.iter().any(|u| u.contains("reserving")), "{undecided:?}");
    assert_eq!(proposal["parses"], true, "{proposal}");
    let counted: i64 = proposal["statuses"].as_array().unwrap().iter().map(|s| s[1].as_i64().unwrap()).sum();
    assert_eq!(counted, 6, "every order counted once, through its parent: {proposal}");
}
