//! Acknowledgements of a sale read over an adapter live in the state database under the sale's
//! name (issue 28), by the same rule as our own: a role the catalogue does not let acknowledge
//! is refused by the core, and by the server when its own state-database account writes the
//! table by raw SQL.

use crate::roles::{applied, mysql_number, People, COMMAND_DENIED};
use crate::support::TestRedis;

use secrecy::ExposeSecret as _;
use sqlx::MySqlPool;
use stockguard_core::action::Refused;
use stockguard_core::alerts::acks::{self, Desk};
use stockguard_core::alerts::{Alert, AlertError, AlertKind};
use stockguard_core::profile::Role;
use stockguard_core::roles::SaleRole;

fn drift(product: u64) -> Alert {
    Alert {
        key: format!("drift:{product}"),
        kind: AlertKind::DriftConfirmed,
        product_id: Some(product.into()),
        value: Some(-1),
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn a_viewer_may_not_acknowledge_an_adapter_sales_alert_in_the_state_database_by_core_or_by_raw_sql(
    state: MySqlPool,
) {
    let redis = TestRedis::new("adack").await;
    let people = People::new();
    applied(&state, &redis, &people, &[SaleRole::Viewer, SaleRole::Oncall]).await;
    let firing = [drift(2)];

    let mut viewer = people.settings(SaleRole::Viewer, &state, &redis).await;
    viewer.role = Role::Viewer;
    let viewer_db = MySqlPool::connect(viewer.mysql_url.expose_secret()).await.expect("the viewer connects");
    let err = acks::acknowledge_at(Desk::adapter(&viewer_db, &viewer, "their-sale"), &firing, "drift:2", "mine", None)
        .await
        .unwrap_err();
    assert!(matches!(err, AlertError::Refused(Refused::Role { role: Role::Viewer, .. })), "{err}");
    let raw = sqlx::query(
        "INSERT INTO alert_acks (sale, alert_key, kind, reason) VALUES ('their-sale', 'drift:2', 'x', 'mine')",
    )
    .execute(&viewer_db)
    .await
    .unwrap_err();
    assert_eq!(mysql_number(raw), COMMAND_DENIED, "the server refuses the viewer's own account");

    // On-call acknowledges with its own account; another sale's same key is its own.
    let mut oncall = people.settings(SaleRole::Oncall, &state, &redis).await;
    oncall.role = Role::Oncall;
    let oncall_db = MySqlPool::connect(oncall.mysql_url.expose_secret()).await.expect("on-call connects");
    let theirs = Desk::adapter(&oncall_db, &oncall, "their-sale");
    let ack = acks::acknowledge_at(theirs, &firing, "drift:2", "looking", None).await.expect("on-call acknowledges");
    assert_eq!(ack.acked_by, people.user(SaleRole::Oncall), "the server's word for who");
    let other = Desk::adapter(&oncall_db, &oncall, "other-sale");
    assert!(acks::open_at(other).await.unwrap().is_empty(), "another sale sees none of it");
    acks::acknowledge_at(other, &firing, "drift:2", "the other sale's", None).await.expect("its own acknowledgement");
    let err = acks::acknowledge_at(theirs, &firing, "drift:2", "again", None).await.unwrap_err();
    assert!(matches!(err, AlertError::AlreadyAcknowledged(_)), "{err}");
    assert!(
        acks::open(
            &crate::support::connections(&state, &redis, stockguard_core::profile::EnvironmentKind::Sandbox).await
        )
        .await
        .unwrap()
        .is_empty(),
        "our own sale's acknowledgements are apart from the adapter sales'"
    );
}
