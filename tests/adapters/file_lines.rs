//! A wrong adapter file is said in one line that names the file's line (issue 49, items 2
//! and 6): a table, a consumer group or a queue the sale lacks, a setting out of bounds. The
//! CLI reads real sales through a SELECT-only account, and nothing is written.

use std::path::Path;
use std::sync::Arc;

use sqlx::MySqlPool;

use crate::cli::{adapter_env, stockguard};
use crate::sales::course_stream::CourseStreamSale;
use crate::sales::fastapi_rabbit::FastapiRabbitSale;

/// The number (from 1) of the first line of `text` that contains `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("no line holds {needle}")) + 1
}

/// `text` with the line that begins `key = ` said as `key = "value"` instead.
fn with_line(text: &str, key: &str, value: &str) -> String {
    text.lines()
        .map(|l| if l.starts_with(&format!("{key} = ")) { format!("{key} = \"{value}\"") } else { l.to_string() })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `args` with the adapter file `text` in place of the sale's: the one line on stderr,
/// after checking the command failed and said no more.
fn refused(args: &[&str], env: &[(&str, String)], dir: &Path, text: &str) -> String {
    let path = dir.join("wrong.toml");
    std::fs::write(&path, text).unwrap();
    let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.retain(|(k, _)| *k != "STOCKGUARD_ADAPTER");
    env.push(("STOCKGUARD_ADAPTER", path.to_str().unwrap()));
    let run = stockguard(args, &env);
    let err = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(!run.status.success(), "{args:?} passed on a wrong file: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: one line, no more: {err}");
    err
}

#[sqlx::test(migrations = false)]
async fn a_table_a_group_or_a_bound_the_sale_lacks_is_said_in_one_line_naming_the_files_line(state: MySqlPool) {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 20)]).await);
    let dir = tempfile::tempdir().unwrap();
    let env = adapter_env(&sale, dir.path(), &state).await;
    let good = sale.adapter_toml();
    let tables = sale.db.tables().await;

    let no_table = good.replace("table = \"tb_seckill_voucher\"", "table = \"tb_seckill_vouchers\"");
    let err = refused(&["recon"], &env, dir.path(), &no_table);
    let line = line_of(&no_table, "tb_seckill_vouchers");
    assert!(err.contains("tb_seckill_vouchers") && err.contains(&format!("line {line})")), "{err}");

    let no_group = with_line(&good, "group", "g9");
    let err = refused(&["recon"], &env, dir.path(), &no_group);
    let line = line_of(&no_group, "group = \"g9\"");
    assert!(err.contains("no consumer group g9") && err.contains(&format!("line {line})")), "{err}");

    let unbounded = good.replacen("[sale]\n", "[sale]\nsettle_ms = 999999\n", 1);
    let err = refused(&["recon"], &env, dir.path(), &unbounded);
    assert!(err.contains(", line 2: [sale] settle_ms is at most"), "{err}");

    // `adapter check` names the line of each problem it finds.
    let no_column = good.replace("remaining = \"stock\"", "remaining = \"stok\"");
    let err = refused(&["adapter", "check"], &env, dir.path(), &no_column);
    let line = line_of(&no_column, "\"stok\"");
    assert!(err.contains(&format!("line {line}: table tb_seckill_voucher has no column stok")), "{err}");

    assert_eq!(sale.db.tables().await, tables, "nothing was written to the sale's database");
    sale.cleanup().await;
}

#[sqlx::test(migrations = false)]
async fn a_queue_rabbitmq_does_not_have_is_said_in_one_line_naming_the_files_line_with_no_client_noise(
    state: MySqlPool,
) {
    let sale = Arc::new(FastapiRabbitSale::start(&[(7, 10)]).await);
    let dir = tempfile::tempdir().unwrap();
    let env = vec![
        ("STOCKGUARD_MYSQL_URL", sale.db.select_only_url().await),
        ("STOCKGUARD_REDIS_URL", crate::support::redis_url()),
        ("STOCKGUARD_ENVIRONMENT", "sandbox".to_string()),
        ("STOCKGUARD_STATE_URL", crate::support::mysql_url_of(&state).await),
    ];
    let wrong = with_line(&sale.adapter_toml(), "queue", "no.such.queue");
    let err = refused(&["recon"], &env, dir.path(), &wrong);
    let line = line_of(&wrong, "no.such.queue");
    assert!(err.contains("RabbitMQ has no queue no.such.queue") && err.contains(&format!("line {line})")), "{err}");
    sale.cleanup().await;
}
