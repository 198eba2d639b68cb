//! Compensation and the headless watcher on a sale Stockguard did not build (issue 29): an
//! oversold sale read over its adapter gets exactly one case from `stockguard watch` alone, in
//! the state database, listing the orders beyond stock by the sale's own ids; its maker, checker
//! and executor are three role accounts of the state database (`roles apply`), and what the
//! triggers forbid is tried by raw SQL with those accounts; the approved case ends in an export
//! of one line per order, and the sale's database is left as it was.

use std::collections::HashMap;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::roles::{self, Person, RolesSpec, SaleRole, Target};

use crate::cli::stockguard;
use crate::sales::course_stream::{status, CourseStreamSale};
use crate::sales::Traffic;
use crate::support::{self, waits::wait_for, TestRedis};

const P: i64 = 1;
const STOCK: i64 = 4;
const BEYOND: i64 = 3;

/// The people of the case, each a MySQL account of the state database made by `roles apply`:
/// a maker and an executor (on-call), a checker (approver).
pub(crate) struct People {
    prefix: String,
    password: String,
}

impl People {
    pub(crate) fn new() -> Self {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
        let id = format!("{:08x}", (nanos ^ (u64::from(std::process::id()) << 20)) & 0xffff_ffff);
        Self { prefix: format!("sga{id}"), password: format!("pw-{id}") }
    }

    pub(crate) fn user(&self, who: &str) -> String {
        format!("{}{who}", self.prefix)
    }

    /// `roles apply` on the state database: the roles and the three accounts.
    pub(crate) async fn apply(&self, state: &MySqlPool) {
        let person = |who: &str, role: SaleRole| Person {
            name: who.into(),
            role,
            mysql_user: self.user(who),
            mysql_host: "%".into(),
            redis_user: None,
            password_env: Some("PW".into()),
        };
        let spec = RolesSpec {
            role_prefix: Some(self.prefix.clone()),
            persons: vec![
                person("mak", SaleRole::Oncall),
                person("chk", SaleRole::Approver),
                person("exe", SaleRole::Oncall),
            ],
        };
        let redis = TestRedis::new("adcomp").await;
        let root = support::connections(state, &redis, EnvironmentKind::Sandbox).await;
        let target = Target::of(&root).await.unwrap();
        let env = |var: &str| (var == "PW").then(|| self.password.clone());
        roles::apply(&roles::plan(&spec, &target, &env).unwrap(), &root, "compensation over an adapter")
            .await
            .expect("the roles apply on the state database");
    }

    /// The state database's URL as `who`.
    pub(crate) async fn url(&self, state: &MySqlPool, who: &str) -> String {
        let mut url = url::Url::parse(&support::mysql_url_of(state).await).unwrap();
        url.set_username(&self.user(who)).unwrap();
        url.set_password(Some(&self.password)).unwrap();
        url.to_string()
    }

    pub(crate) async fn forget(&self, state: &MySqlPool) {
        for who in ["mak", "chk", "exe"] {
            let _ = sqlx::raw_sql(&format!("DROP USER IF EXISTS '{}'@'%'", self.user(who))).execute(state).await;
        }
        for role in SaleRole::ALL {
            let _ = sqlx::raw_sql(&format!("DROP ROLE IF EXISTS `{}_{role}`", self.prefix)).execute(state).await;
        }
    }
}

/// The course sale's adapter file in `dir`, and the environment that reads the sale through it
/// with a SELECT-only account, `state_url` as Stockguard's own database.
async fn env_for(sale: &CourseStreamSale, dir: &std::path::Path, state_url: &str) -> Vec<(&'static str, String)> {
    let adapter = dir.join("sale.toml");
    std::fs::write(&adapter, sale.adapter_toml()).unwrap();
    vec![
        ("STOCKGUARD_MYSQL_URL", sale.db.select_only_url().await),
        ("STOCKGUARD_REDIS_URL", support::redis_url()),
        ("STOCKGUARD_ENVIRONMENT", "sandbox".into()),
        ("STOCKGUARD_ADAPTER", adapter.to_str().unwrap().into()),
        ("STOCKGUARD_STATE_URL", state_url.into()),
    ]
}

pub(crate) fn run(args: &[&str], env: &[(&'static str, String)]) -> Output {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = stockguard(args, &env);
    assert!(
        out.status.success(),
        "{args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub(crate) fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("--json prints JSON")
}

/// `n` orders written past the stock by the sale's own bug; their ids (the sale's, not ours),
/// sorted.
async fn oversell(sale: &CourseStreamSale, n: i64) -> Vec<String> {
    let sold: Vec<i64> = sale.order_ids(P, status::UNPAID).await;
    sale.oversell(P, n).await;
    let mut beyond: Vec<String> = sale
        .order_ids(P, status::UNPAID)
        .await
        .into_iter()
        .filter(|id| !sold.contains(id))
        .map(|id| id.to_string())
        .collect();
    beyond.sort();
    beyond
}

/// The watcher, killed when dropped (a test that fails leaves no process behind).
struct Watcher(Child);

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn scrape(addr: &str) -> Option<String> {
    reqwest::get(format!("http://{addr}/metrics")).await.ok()?.text().await.ok()
}

/// The value of one metric line `name{product="1"...}` (with `status` when given).
fn gauge(scrape: &str, name: &str, status: Option<&str>) -> Option<String> {
    let wanted = match status {
        Some(s) => format!("{name}{{product=\"{P}\",status=\"{s}\"}} "),
        None => format!("{name}{{product=\"{P}\"}} "),
    };
    scrape.lines().find_map(|l| l.strip_prefix(&wanted)).map(str::to_string)
}

/// Raw SQL the server refuses: a trigger's words (45000), or a missing privilege (1142).
pub(crate) async fn refused(pool: &MySqlPool, sql: &str) -> String {
    let err = sqlx::query(sql).execute(pool).await.expect_err(sql);
    err.as_database_error().unwrap_or_else(|| panic!("a server refusal, not {err}")).message().to_string()
}

#[sqlx::test(migrations = false)]
async fn an_oversold_adapter_sale_with_no_window_open_gets_one_case_from_watch_worked_by_three_accounts_and_exported_per_order(
    state: MySqlPool,
) {
    let sale = Arc::new(CourseStreamSale::start(&[(P, STOCK), (2, 10)]).await);
    Traffic::buyers(8).on(&[P]).run(&sale).await;
    wait_for("the consumer drains the stream", Duration::from_secs(30), async || sale.stream_backlog().await == 0)
        .await;
    assert_eq!(sale.orders(P).await, STOCK, "the sale sold its stock and no more");
    let root_url = support::mysql_url_of(&state).await;
    stockguard_core::adapter::state::open(&root_url).await.expect("the state database is migrated");
    let people = People::new();
    people.apply(&state).await;
    let dir = tempfile::tempdir().unwrap();
    let as_root = env_for(&sale, dir.path(), &root_url).await;
    run(&["adapter", "baseline", "--reason", "the sale opens"], &as_root);

    let beyond = oversell(&sale, BEYOND).await;
    assert_eq!(beyond.len() as i64, BEYOND);
    let tables = sale.db.tables().await;

    // The watcher alone, on the on-call maker's state account, with no window open.
    let maker = env_for(&sale, dir.path(), &people.url(&state, "mak").await).await;
    let addr = format!("127.0.0.1:{}", support::free_port());
    let mut watcher = Command::new(env!("CARGO_BIN_EXE_stockguard"));
    watcher.args(["watch", "--metrics-listen", &addr, "--interval-ms", "100"]).env("STOCKGUARD_CONFIG_DIR", dir.path());
    for k in support::PROFILE_OVERRIDES {
        watcher.env_remove(k);
    }
    let watcher = Watcher(
        watcher
            .envs(maker.iter().map(|(k, v)| (*k, v.as_str())))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut seen = String::new();
    wait_for("the watcher serves the product as OVERSOLD and settled", Duration::from_secs(60), async || {
        seen = scrape(&addr).await.unwrap_or_default();
        gauge(&seen, "stockguard_product_status", Some("OVERSOLD")).as_deref() == Some("1")
            && gauge(&seen, "stockguard_reading_settled", None).as_deref() == Some("1")
    })
    .await;
    assert_eq!(gauge(&seen, "stockguard_product_status", Some("OK")).as_deref(), Some("0"), "{seen}");
    assert_eq!(gauge(&seen, "stockguard_in_flight_entries", None).as_deref(), Some("0"), "{seen}");
    assert!(gauge(&seen, "stockguard_db_stock_units", None).is_some(), "{seen}");
    let cases = async || -> i64 { support::scalar(&state, "SELECT COUNT(*) FROM compensation_cases").await };
    wait_for("the watcher opens the case", Duration::from_secs(60), async || cases().await > 0).await;
    // More readings of the same oversell open nothing more.
    let revision = |s: &str| -> f64 {
        s.lines()
            .find_map(|l| l.strip_prefix("stockguard_reading_revision "))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    let at = revision(&seen);
    wait_for("three more readings", Duration::from_secs(60), async || {
        revision(&scrape(&addr).await.unwrap_or_default()) >= at + 3.0
    })
    .await;
    assert_eq!(cases().await, 1, "one case per incident");
    drop(watcher);

    let list = json(&run(&["compensation", "list", "--json"], &maker));
    let case_id = list[0]["id"].as_u64().expect("the case is listed");
    let case = json(&run(&["compensation", "show", &case_id.to_string(), "--json"], &maker));
    let mut lines: Vec<String> =
        case["lines"].as_array().unwrap().iter().map(|l| l["order_no"].as_str().unwrap().to_string()).collect();
    lines.sort();
    assert_eq!(lines, beyond, "the case lists exactly the orders beyond stock, by the sale's own ids");
    assert_eq!(case["product_id"], P);
    let opened_by: String = sqlx::query_scalar("SELECT opened_by FROM compensation_cases WHERE id = ?")
        .bind(case_id)
        .fetch_one(&state)
        .await
        .unwrap();
    assert_eq!(opened_by, people.user("mak"), "the watcher's account opened it, as the server says");

    // Four eyes, by the role accounts themselves: the maker plans and proposes ...
    let id = case_id.to_string();
    run(&["compensation", "propose", &id, "--oversold", "cancel-refund", "--note", "beyond stock"], &maker);
    let maker_pool = MySqlPool::connect(&people.url(&state, "mak").await).await.unwrap();
    let checker_pool = MySqlPool::connect(&people.url(&state, "chk").await).await.unwrap();
    let executor_pool = MySqlPool::connect(&people.url(&state, "exe").await).await.unwrap();
    // ... and can neither approve their own proposal (no right to a verdict) nor record an
    // effect of an unapproved case, by raw SQL.
    let own =
        refused(&maker_pool, &format!("INSERT INTO compensation_verdicts (case_id, verdict) VALUES ({id}, 'APPROVE')"))
            .await;
    assert!(own.contains("denied"), "{own}");
    let effect = format!(
        "INSERT INTO compensation_effects (case_id, order_no, action, detail) VALUES ({id}, '{}', 'CANCEL_REFUND', 'done')",
        beyond[0]
    );
    let early = refused(&executor_pool, &effect).await;
    assert!(early.contains("only while executing"), "{early}");
    // The orders a case names are fixed once read, for the maker too.
    let fixed =
        refused(&maker_pool, &format!("UPDATE adapter_orders SET user_id = 7 WHERE order_no = '{}'", beyond[0])).await;
    assert!(fixed.contains("denied") || fixed.contains("is fixed"), "{fixed}");

    let checker = env_for(&sale, dir.path(), &people.url(&state, "chk").await).await;
    let approved = json(&run(&["compensation", "approve", &id, "--reason", "checked", "--json"], &checker));
    assert_eq!(approved["status"], "APPROVED");
    // The checker cannot execute: no right to an effect.
    let checker_effect = refused(&checker_pool, &effect).await;
    assert!(checker_effect.contains("denied"), "{checker_effect}");
    // The maker, whose on-call account may write steps and effects, is refused by the trigger.
    let maker_executes =
        refused(&maker_pool, &format!("INSERT INTO compensation_steps (case_id, step) VALUES ({id}, 'EXECUTE')")).await;
    assert!(maker_executes.contains("cannot execute"), "{maker_executes}");

    let executor = env_for(&sale, dir.path(), &people.url(&state, "exe").await).await;
    let ran = json(&run(&["compensation", "execute", &id, "--confirm", &id, "--json"], &executor));
    assert_eq!(ran["after"]["status"], "EXECUTED", "{ran}");
    assert_eq!(ran["lines"].as_array().unwrap().len() as i64, BEYOND, "{ran}");
    let steps: HashMap<String, String> =
        sqlx::query_as("SELECT CAST(step AS CHAR), actor FROM compensation_steps WHERE case_id = ? AND step IN ('PROPOSE', 'APPROVE', 'EXECUTE')")
            .bind(case_id)
            .fetch_all(&state)
            .await
            .unwrap()
            .into_iter()
            .collect();
    assert_eq!(steps["PROPOSE"], people.user("mak"));
    assert_eq!(steps["APPROVE"], people.user("chk"));
    assert_eq!(steps["EXECUTE"], people.user("exe"));

    // The sale declares no cancel: nothing was written there, and the export carries each order.
    assert_eq!(sale.orders(P).await, STOCK + BEYOND, "the sale's orders are as they were");
    assert_eq!(sale.db.tables().await, tables);
    let out = dir.path().join("case.csv");
    run(&["compensation", "export", &id, "--out", out.to_str().unwrap()], &executor);
    let text = std::fs::read_to_string(&out).unwrap();
    // No field of this case holds a comma or a quote: a plain split reads it.
    let rows: Vec<Vec<&str>> = text.lines().skip(1).map(|l| l.split(',').collect()).collect();
    let mut exported: Vec<String> = rows.iter().map(|r| r[2].to_string()).collect();
    exported.sort();
    assert_eq!(exported, beyond, "one line per order beyond stock: {text}");
    for r in &rows {
        assert_eq!(r.len(), 15, "{r:?}");
        assert_eq!(r[10], "DONE");
        assert!(r[11].contains("handed over in the approved export"), "{r:?}");
        assert_eq!(r[12], people.user("exe"));
    }

    for pool in [maker_pool, checker_pool, executor_pool] {
        pool.close().await;
    }
    people.forget(&state).await;
    sale.cleanup().await;
}

/// The sale's `[sale] name` in its adapter file.
fn sale_name(sale: &CourseStreamSale) -> String {
    let toml = sale.adapter_toml();
    let line = toml.lines().find(|l| l.starts_with("name = ")).expect("the file names its sale");
    line.trim_start_matches("name = ").trim_matches('"').to_string()
}

#[sqlx::test(migrations = false)]
async fn a_colleagues_forged_order_row_refuses_the_opening_and_a_true_one_is_named_as_theirs(state: MySqlPool) {
    const Q: i64 = 2;
    let sale = Arc::new(CourseStreamSale::start(&[(P, STOCK), (Q, STOCK)]).await);
    Traffic::buyers(12).on(&[P, Q]).run(&sale).await;
    wait_for("the consumer drains the stream", Duration::from_secs(30), async || sale.stream_backlog().await == 0)
        .await;
    let root_url = support::mysql_url_of(&state).await;
    stockguard_core::adapter::state::open(&root_url).await.expect("the state database is migrated");
    let people = People::new();
    people.apply(&state).await;
    let dir = tempfile::tempdir().unwrap();
    run(&["adapter", "baseline", "--reason", "the sale opens"], &env_for(&sale, dir.path(), &root_url).await);
    let forged_order = oversell(&sale, 1).await.remove(0);
    let sold_q = sale.order_ids(Q, status::UNPAID).await;
    sale.oversell(Q, 1).await;
    let true_order = sale.order_ids(Q, status::UNPAID).await.into_iter().find(|id| !sold_q.contains(id)).unwrap();
    let name = sale_name(&sale);
    let other = MySqlPool::connect(&people.url(&state, "exe").await).await.unwrap();
    let record =
        "INSERT INTO adapter_orders (sale, order_no, kind, product_id, user_id, qty, created_at, price_cents) \
                  VALUES (?, ?, 'OVERSOLD', ?, ?, 1, ?, ?)";
    // Another on-call, before the honest colleague opens P's case: a buyer and a price of their own.
    sqlx::query(record)
        .bind(&name)
        .bind(forged_order.to_string())
        .bind(P)
        .bind(31337_u64)
        .bind(chrono::Utc::now().naive_utc())
        .bind(500_000_i64)
        .execute(&other)
        .await
        .expect("on-call may record an order read over an adapter");
    // ... and Q's order as the sale holds it.
    let (buyer, at): (i64, chrono::NaiveDateTime) =
        sqlx::query_as("SELECT user_id, create_time FROM tb_voucher_order WHERE id = ?")
            .bind(true_order)
            .fetch_one(&sale.db.pool)
            .await
            .unwrap();
    sqlx::query(record)
        .bind(&name)
        .bind(true_order.to_string())
        .bind(Q)
        .bind(buyer)
        .bind(at)
        .bind(0_i64)
        .execute(&other)
        .await
        .unwrap();

    let maker = env_for(&sale, dir.path(), &people.url(&state, "mak").await).await;
    let env: Vec<(&str, &str)> = maker.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = stockguard(&["compensation", "open", "--product", &P.to_string()], &env);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    for said in [forged_order.to_string().as_str(), "buyer 31337", "price 500000 cents", people.user("exe").as_str()] {
        assert!(err.contains(said), "{said:?} in {err}");
    }
    assert_eq!(support::scalar(&state, "SELECT COUNT(*) FROM compensation_cases").await, 0_i64, "no case opened");
    assert_eq!(support::scalar(&state, "SELECT COUNT(*) FROM adapter_orders").await, 2_i64, "nothing recorded");

    let opened = json(&run(&["compensation", "open", "--product", &Q.to_string(), "--json"], &maker));
    let id = opened["case_id"].as_u64().unwrap_or_else(|| panic!("{opened}")).to_string();
    let case = json(&run(&["compensation", "show", &id, "--json"], &maker));
    let line = &case["lines"][0];
    assert_eq!(line["order_no"], true_order.to_string());
    assert_eq!(line["user_id"], buyer);
    assert_eq!(line["read_by"], people.user("exe"), "a colleague's row, named: {case}");
    let shown = String::from_utf8_lossy(&run(&["compensation", "show", &id], &maker).stdout).into_owned();
    assert!(
        shown.contains(&format!("order {true_order} was recorded from the sale by {}", people.user("exe"))),
        "{shown}"
    );
    let csv = dir.path().join("q.csv");
    run(&["compensation", "export", &id, "--out", csv.to_str().unwrap()], &maker);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.lines().next().unwrap().ends_with(",read_by"), "{text}");
    assert!(text.lines().nth(1).unwrap().ends_with(&format!(",{}", people.user("exe"))), "{text}");

    other.close().await;
    people.forget(&state).await;
    sale.cleanup().await;
}

#[sqlx::test(migrations = false)]
async fn a_declared_cancel_sets_the_sales_own_status_only_through_an_account_that_may_write_it(state: MySqlPool) {
    use stockguard_core::adapter::AdapterFile;
    use stockguard_core::compensation::execute::LineRun;
    use stockguard_core::compensation::over_adapter::{self, SaleSide};
    use stockguard_core::compensation::plan::{set_plan, Choice, Lines};
    use stockguard_core::compensation::read::show;
    use stockguard_core::compensation::workflow::{take, StepKind};
    use stockguard_core::compensation::{Action, LineOutcome};

    let sale = Arc::new(CourseStreamSale::start(&[(P, STOCK)]).await);
    Traffic::buyers(6).on(&[P]).run(&sale).await;
    wait_for("the consumer drains the stream", Duration::from_secs(30), async || sale.stream_backlog().await == 0)
        .await;
    stockguard_core::adapter::state::open(&support::mysql_url_of(&state).await)
        .await
        .expect("the state database is migrated");
    let beyond = oversell(&sale, 2).await;
    let text = format!("{}\n[compensation]\ncancel = {{ status = {} }}\n", sale.adapter_toml(), status::CANCELLED);
    let file = AdapterFile::parse(&text, std::path::Path::new("sale.toml")).unwrap();
    let maker = support::accounts::person(&state, "mak").await;
    let checker = support::accounts::person(&state, "chk").await;
    let executor = support::accounts::person(&state, "exe").await;
    let select_only = MySqlPool::connect(&sale.db.select_only_url().await).await.unwrap();
    let reading_side = SaleSide { file: &file, db: &select_only };
    let writing_side = SaleSide { file: &file, db: &sale.db.pool };

    // A SELECT-only account opens the case: opening reads the sale.
    let opened = over_adapter::open_case(&maker, reading_side, &(P as u64).into(), STOCK, &[]).await.unwrap();
    let case_id = opened.case_id;
    assert_eq!(opened.lines_added, 2);
    let all = [Choice { lines: Lines::All, action: Action::CancelRefund, amount_cents: None, note: String::new() }];
    set_plan(&maker, case_id, &all).await.unwrap();
    take(&maker, case_id, StepKind::Propose, "cancel what was sold beyond stock").await.unwrap();
    take(&checker, case_id, StepKind::Approve, "checked").await.unwrap();

    // Through the SELECT-only account the cancel is refused by the sale's server, and no line is
    // recorded as done.
    let err = over_adapter::execute(&executor, reading_side, case_id, &|_, _, _| {}).await.unwrap_err();
    let said = stockguard_core::step::chain(&err);
    assert!(said.contains("cannot cancel an order"), "{said}");
    assert!(show(&executor, case_id).await.unwrap().lines.iter().all(|l| l.outcome == LineOutcome::Pending));
    assert_eq!(sale.orders(P).await, STOCK + 2, "nothing changed in the sale");

    // Through an account that may write, each order beyond stock gets the sale's own cancelled
    // status, once.
    let ran = over_adapter::execute(&executor, writing_side, case_id, &|_, _, _| {}).await.unwrap();
    assert!(
        ran.lines.iter().all(|l| matches!(l, LineRun::Done { detail, .. } if detail.contains("cancelled in the sale"))),
        "{ran:?}"
    );
    let mut cancelled: Vec<String> =
        sale.order_ids(P, status::CANCELLED).await.into_iter().map(|id| id.to_string()).collect();
    cancelled.sort();
    assert_eq!(cancelled, beyond, "exactly the orders beyond stock are cancelled, by their own ids");
    assert_eq!(sale.orders(P).await, STOCK, "what is live is the stock again");
    let again = over_adapter::execute(&executor, writing_side, case_id, &|_, _, _| {}).await;
    assert!(again.is_err(), "an executed case is not executed twice: {again:?}");

    select_only.close().await;
    support::accounts::forget(&state).await;
    sale.cleanup().await;
}
