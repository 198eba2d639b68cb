//! The schema: every migration applies on an empty database, the reconciliation query is
//! served by the covering index, the audit log is append-only.

use crate::support;

use sqlx::{MySqlPool, Row as _};
use stockguard_core::connect::MIGRATOR;

const TABLES: [&str; 26] = [
    "adapter_baselines",
    "adapter_orders",
    "alert_acks",
    "audit_log",
    "compensation_approved_orders",
    "compensation_cases",
    "compensation_effects",
    "compensation_events",
    "compensation_lines",
    "compensation_settings",
    "compensation_steps",
    "compensation_verdicts",
    "degrade_switch",
    "drill_events",
    "drill_runs",
    "ended_rig_heartbeats",
    "engine_heartbeats",
    "engine_instances",
    "inventory",
    "order_failures",
    "orders",
    "outbox",
    "rewrite_runs",
    "sale_role_accounts",
    "switch_changes",
    "switch_head",
];

#[sqlx::test(migrations = false)]
async fn every_migration_applies_on_an_empty_database(pool: MySqlPool) {
    let before: Vec<(String,)> = sqlx::query_as("SHOW TABLES").fetch_all(&pool).await.unwrap();
    assert!(before.is_empty(), "the database starts empty: {before:?}");

    MIGRATOR.run(&pool).await.expect("migrations apply");

    let applied: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations WHERE success = 1").fetch_one(&pool).await.unwrap();
    assert_eq!(applied as usize, MIGRATOR.iter().count());
    let mut tables: Vec<String> = sqlx::query_scalar("SHOW TABLES").fetch_all(&pool).await.unwrap();
    tables.retain(|t| t != "_sqlx_migrations");
    tables.sort();
    assert_eq!(tables, TABLES);
}

#[sqlx::test(migrations = false)]
async fn applying_the_migrations_twice_changes_nothing(pool: MySqlPool) {
    MIGRATOR.run(&pool).await.unwrap();
    MIGRATOR.run(&pool).await.expect("a second run is a no-op");
}

async fn fill_orders(pool: &MySqlPool, products: u64, per_product: u64) {
    for p in 1..=products {
        let mut qb = sqlx::QueryBuilder::<sqlx::MySql>::new(
            "INSERT INTO orders (order_no, user_id, product_id, buy_count, status, pay_deadline) ",
        );
        qb.push_values(0..per_product, |mut b, i| {
            let status = ["WAIT_PAY", "PAID", "CLOSED", "CANCELLED"][(i % 4) as usize];
            b.push_bind(format!("o{p}-{i}"))
                .push_bind(i)
                .push_bind(p)
                .push_bind(1 + (i % 2) as i32)
                .push_bind(status)
                .push_bind(chrono::Utc::now().naive_utc());
        });
        qb.build().execute(pool).await.unwrap();
    }
    sqlx::query("ANALYZE TABLE orders").execute(pool).await.unwrap();
}

/// (key, type, Extra) of the single `orders` row of an EXPLAIN.
async fn explain_orders(pool: &MySqlPool, sql: &str) -> (Option<String>, String, String) {
    let rows = sqlx::query(&format!("EXPLAIN {sql}")).fetch_all(pool).await.unwrap();
    let row = rows
        .iter()
        .find(|r| r.try_get::<String, _>("table").is_ok_and(|t| t == "orders"))
        .expect("EXPLAIN has a row for orders");
    (
        row.try_get("key").unwrap(),
        row.try_get::<String, _>("type").unwrap(),
        row.try_get::<Option<String>, _>("Extra").unwrap().unwrap_or_default(),
    )
}

#[sqlx::test(migrations = "./migrations")]
async fn the_reconciliation_query_reads_only_the_covering_index(pool: MySqlPool) {
    fill_orders(&pool, 50, 200).await;

    let (key, access, extra) = explain_orders(
        &pool,
        "SELECT product_id, SUM(buy_count) FROM orders WHERE status IN ('WAIT_PAY','PAID') GROUP BY product_id",
    )
    .await;

    assert_eq!(key.as_deref(), Some("idx_orders_recon"), "uses the covering index");
    assert_ne!(access, "ALL", "no table scan of orders");
    assert!(extra.contains("Using index"), "answered from the index alone: Extra = {extra}");
    assert!(!extra.contains("Using temporary"), "no temporary table for GROUP BY: Extra = {extra}");
}

#[sqlx::test(migrations = "./migrations")]
async fn the_audit_log_refuses_updates_and_deletes(pool: MySqlPool) {
    sqlx::query("INSERT INTO audit_log (actor, role, environment, action, target, reason, outcome) VALUES ('a','oncall','sandbox','x','t','r','OK')")
        .execute(&pool)
        .await
        .unwrap();

    let update = sqlx::query("UPDATE audit_log SET reason = 'rewritten'").execute(&pool).await;
    let delete = sqlx::query("DELETE FROM audit_log").execute(&pool).await;

    assert!(update.unwrap_err().to_string().contains("append-only"));
    assert!(delete.unwrap_err().to_string().contains("append-only"));
    let reason: String = sqlx::query_scalar("SELECT reason FROM audit_log").fetch_one(&pool).await.unwrap();
    assert_eq!(reason, "r");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_duplicate_order_number_is_refused_by_the_unique_index(pool: MySqlPool) {
    let insert = || {
        sqlx::query("INSERT INTO orders (order_no, user_id, product_id, buy_count, pay_deadline) VALUES ('dup', 1, 1, 1, NOW())")
            .execute(&pool)
    };
    insert().await.unwrap();
    let err = insert().await.unwrap_err();
    let code = err.as_database_error().and_then(|e| e.code()).map(|c| c.to_string());
    assert_eq!(code.as_deref(), Some("23000"), "{err}");
}

#[tokio::test]
async fn migrating_without_super_on_a_binary_logging_server_says_what_to_do_and_that_remedy_works() {
    use stockguard_core::connect::{self, ConnectError};
    // Binary logging is on by default on MySQL 8; this private MariaDB has it on too, and
    // both refuse triggers to a user without SUPER unless log_bin_trust_function_creators.
    let server = support::mariadb_server::MariadbServer::start(&["--log-bin=binlog", "--server-id=1"]).await;
    let root = MySqlPool::connect(&server.url("root", "mysql")).await.unwrap();
    sqlx::query("CREATE DATABASE sale").execute(&root).await.unwrap();
    for host in ["%", "localhost", "127.0.0.1"] {
        sqlx::query(&format!("CREATE USER 'app'@'{host}'")).execute(&root).await.unwrap();
        sqlx::query(&format!("GRANT ALL ON sale.* TO 'app'@'{host}'")).execute(&root).await.unwrap();
    }
    let app = MySqlPool::connect(&server.url("app", "sale")).await.unwrap();

    let refused = connect::migrate(&app, "the sale DB").await.unwrap_err();
    let ConnectError::MigrateNeedsTriggerPrivilege { version, .. } = refused else {
        panic!("a raw error instead of the remedy: {refused}");
    };
    assert_eq!(version, 20261129000004);
    let message = refused.to_string();
    assert!(message.contains("log_bin_trust_function_creators = 1"), "{message}");

    // The remedy the message gives, step by step, then the migration goes through.
    sqlx::query("SET GLOBAL log_bin_trust_function_creators = 1").execute(&root).await.unwrap();
    let cleanup = message.split("left: ").nth(1).and_then(|m| m.split(" and run").next()).expect("cleanup statements");
    for statement in cleanup.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        sqlx::query(statement).execute(&app).await.unwrap_or_else(|e| panic!("{statement}: {e}"));
    }
    connect::migrate(&app, "the sale DB").await.unwrap();
    let triggers: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = 'sale' AND EVENT_OBJECT_TABLE = 'audit_log'",
    )
    .fetch_one(&app)
    .await
    .unwrap();
    assert_eq!(triggers, 3, "append-only (update, delete) and the actor from the server");
}
