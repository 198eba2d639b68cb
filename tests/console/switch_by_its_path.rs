//! A switch row moves only through the switch's own path (issue 51, item 4;
//! `migrations/20261207000035_switch_by_its_path.sql`): a change row, its revision at the head
//! and its audit row. A facilitator's own account had put the whole sale in DB mode with one
//! raw `UPDATE degrade_switch`: the live engine went DEGRADED with no change row, no audit row
//! and the revision unchanged. Here the sale's engine serves and buyers buy while the roles' own
//! accounts (made by `roles apply`) try it by raw SQL, in a strict session and a loose one;
//! every try is refused, the engine never leaves NORMAL, and the path itself still works for
//! the same accounts.

use crate::four_eyes::{desk, Desk};
use crate::four_eyes_rig_and_notes::{refused, session};
use crate::in_process;
use crate::sale;
use crate::support::{self, TestRedis};

use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::switch::{store, Changer, Mode, Scope};
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use support::waits::wait_for;

/// The sale's product, on sale beside the attacks.
const P: u64 = 3501;

/// What the triggers say when they refuse a switch row moved by hand.
const BY_ITS_PATH: &str = "switch: a switch row moves only through the switch";

/// The sale's one product on sale, its engine serving, and the global row NORMAL at revision 1
/// (the sale opened through the switch, as `degrade` writes it).
async fn a_live_sale(pool: &MySqlPool, d: &Desk) -> (EngineState, impl FnOnce() -> tokio::task::JoinHandle<()>) {
    sale::open_sale(&d.root, P, 1_000, 1_000).await;
    let opener = Changer::person(&d.root.settings).unwrap();
    store::set(pool, &opener, Scope::Global, Mode::Normal, "the sale opens").await.unwrap();
    let engine =
        EngineState::new(d.root.mysql.clone(), d.root.redis.clone(), d.root.keys.clone(), EngineConfig::default());
    let (_url, stop, handle) = sale::spawn_engine(engine.clone()).await;
    wait_for("the sale's engine applied revision 1", Duration::from_secs(10), async || {
        support::scalar(pool, "SELECT COUNT(*) FROM engine_heartbeats WHERE applied_revision >= 1").await == 1
    })
    .await;
    let stopper = move || {
        let _ = stop.send(());
        handle
    };
    (engine, stopper)
}

/// A buyer buys one unit from the serving engine: accepted (202), or the engine's answer.
async fn a_buyer_buys(engine: &EngineState, buyer: u64) -> Result<(), String> {
    let (status, answer) = in_process::post_order(engine, P, buyer, 1, &format!("buy-{buyer}")).await;
    match status {
        axum::http::StatusCode::ACCEPTED => Ok(()),
        other => Err(format!("buyer {buyer}: {other} {answer}")),
    }
}

/// What the switch's history holds: (change rows, `degrade.switch` audit rows, the global row's
/// mode and revision).
async fn history(pool: &MySqlPool) -> (i64, i64, String, i64) {
    let changes = support::scalar(pool, "SELECT COUNT(*) FROM switch_changes").await;
    let audited = support::scalar(pool, "SELECT COUNT(*) FROM audit_log WHERE action = 'degrade.switch'").await;
    let (mode, revision): (String, i64) = sqlx::query_as(
        "SELECT CAST(mode AS CHAR), CAST(revision AS SIGNED) FROM degrade_switch WHERE scope = 'global'",
    )
    .fetch_one(pool)
    .await
    .unwrap();
    (changes, audited, mode, revision)
}

/// Every way a hostile colleague moves a switch row by hand: the issue's own statement, with a
/// new revision, a new product scope, an upsert, the path's steps without the audit row (in one
/// transaction, rolled back after), and, loose, a NULL or unknown mode.
fn attacks(loose: bool) -> Vec<Vec<String>> {
    let row = "INSERT INTO degrade_switch (scope, product_id, mode, revision, changed_by, reason, changed_at)";
    let mut attacks = vec![
        vec!["UPDATE degrade_switch SET mode = 'DEGRADED' WHERE scope = 'global'".to_string()],
        vec!["UPDATE degrade_switch SET mode = 'DEGRADED', revision = revision + 1 WHERE scope = 'global'".into()],
        vec![format!(
            "{row} SELECT 'product:{P}', {P}, 'DEGRADED', revision, 'me', 'hand', NOW(3) FROM switch_head WHERE id = 1"
        )],
        vec![format!(
            "{row} VALUES ('global', NULL, 'DEGRADED', 1, 'me', 'hand', NOW(3)) \
             ON DUPLICATE KEY UPDATE mode = 'DEGRADED'"
        )],
        // The change row and the head, as the path writes them, but no audit row.
        vec![
            "INSERT INTO switch_changes (scope, mode, changed_by, reason) VALUES ('global', 'DEGRADED', 'me', 'hand')"
                .into(),
            "UPDATE switch_head SET revision = LAST_INSERT_ID() WHERE id = 1".into(),
            "UPDATE degrade_switch d JOIN switch_changes c ON c.revision = (SELECT revision FROM switch_head) \
             SET d.mode = c.mode, d.revision = c.revision, d.changed_by = c.changed_by, d.reason = c.reason, \
                 d.changed_at = c.changed_at \
             WHERE d.scope = 'global'"
                .into(),
        ],
    ];
    if loose {
        attacks.push(vec!["UPDATE degrade_switch SET mode = NULL WHERE scope = 'global'".into()]);
        attacks.push(vec!["UPDATE degrade_switch SET mode = 'BOGUS' WHERE scope = 'global'".into()]);
        attacks
            .push(vec!["UPDATE degrade_switch SET revision = NULL, mode = 'DEGRADED' WHERE scope = 'global'".into()]);
    }
    attacks
}

#[sqlx::test(migrations = "./migrations")]
async fn no_roles_account_moves_a_switch_row_by_raw_sql_beside_a_live_sale_and_the_path_still_does(pool: MySqlPool) {
    let redis = TestRedis::new("swpath1").await;
    let d = desk(&pool, &redis).await;
    let (engine, stop) = a_live_sale(&pool, &d).await;
    a_buyer_buys(&engine, 1).await.expect("a buyer buys from Redis");
    let before = history(&pool).await;
    assert_eq!(before, (1, 1, "NORMAL".into(), 1));

    let accounts = [("facilitator", &d.facilitator.mysql), ("on-call", &d.maker.mysql), ("admin", &d.admin.mysql)];
    for (who, account) in accounts {
        for loose in [false, true] {
            for statements in attacks(loose) {
                let mut conn = session(account, loose).await;
                sqlx::query("BEGIN").execute(&mut conn).await.unwrap();
                let (last, steps) = statements.split_last().unwrap();
                for step in steps {
                    sqlx::query(step).execute(&mut conn).await.unwrap_or_else(|e| panic!("{who}: {step}: {e}"));
                }
                let why = refused(&mut conn, last).await;
                assert!(why.starts_with(BY_ITS_PATH), "{who} (loose: {loose}): {last}: {why}");
                sqlx::query("ROLLBACK").execute(&mut conn).await.unwrap();
            }
            // Nor is the head moved back to an older change, nor a switch row deleted.
            let mut conn = session(account, loose).await;
            let why = refused(&mut conn, "UPDATE switch_head SET revision = 0 WHERE id = 1").await;
            assert!(why.starts_with("switch: the head moves only forward"), "{who}: {why}");
        }
    }
    let mut admin = session(&d.admin.mysql, true).await;
    let why = refused(&mut admin, "DELETE FROM degrade_switch WHERE scope = 'global'").await;
    assert!(why.starts_with("switch: a switch row is never deleted"), "{why}");

    // The sale never left NORMAL: the buyers still buy from Redis, the history is as it was.
    assert_eq!(engine.home_mode(), Mode::Normal);
    a_buyer_buys(&engine, 2).await.expect("buyers still buy from Redis");
    assert_eq!(history(&pool).await, before, "no change, no audit row, no new revision");

    // Through the path, the same accounts' changes are written, revisioned, audited and applied:
    // the engine that ignored nothing above goes to DB mode, and a deleted row cannot lead it out.
    let oncall = Changer::person(&d.maker.settings).unwrap();
    let change = store::set(&d.maker.mysql, &oncall, Scope::Global, Mode::Degraded, "Redis suspected").await.unwrap();
    wait_for("the sale's engine applied the change", Duration::from_secs(10), async || {
        engine.home_mode() == Mode::Degraded
    })
    .await;
    assert_eq!(history(&pool).await, (2, 2, "DEGRADED".into(), change.revision as i64));
    let why = refused(&mut admin, "DELETE FROM degrade_switch WHERE scope = 'global'").await;
    assert!(why.starts_with("switch: a switch row is never deleted"), "{why}");
    let facilitator = Changer::person(&d.facilitator.settings).unwrap();
    let rig = store::set(&d.facilitator.mysql, &facilitator, Scope::Rig(9), Mode::Degraded, "its rig").await.unwrap();
    let actors: Vec<String> =
        sqlx::query_scalar("SELECT actor FROM audit_log WHERE action = 'degrade.switch' ORDER BY id")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(actors.len(), 3, "one audit row per change: {actors:?}");
    assert_eq!(
        &actors[1..],
        [
            d.people.user(stockguard_core::roles::SaleRole::Oncall),
            d.people.user(stockguard_core::roles::SaleRole::Facilitator)
        ]
    );
    assert!(rig.revision > change.revision);
    stop().await.unwrap();
}
