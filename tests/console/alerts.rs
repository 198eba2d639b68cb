//! Alerts with acknowledgement: a drift two readings confirm fires; an on-call engineer takes
//! it with a reason; the fenced rewrite repairs the drift and the acknowledgement closes by
//! itself; both are in the audit log, under the account the server saw.

use crate::sale;
use crate::support;

use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::alerts::{self, acks, AlertError, AlertKind, Thresholds};
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::rewrite::{self, RewriteRequest};
use support::TestRedis;

const P: u64 = 41;

async fn firing(conns: &stockguard_core::connect::Connections) -> Vec<alerts::Alert> {
    alerts::now::firing(conns, &Thresholds::default(), Duration::from_millis(50)).await.unwrap()
}

async fn audited(pool: &MySqlPool, action: &str) -> Vec<(String, String)> {
    sqlx::query_as("SELECT actor, target FROM audit_log WHERE action = ? ORDER BY id")
        .bind(action)
        .fetch_all(pool)
        .await
        .unwrap()
}

#[sqlx::test(migrations = "./migrations")]
async fn an_acknowledged_drift_closes_itself_once_the_rewrite_repairs_it(pool: MySqlPool) {
    let redis = TestRedis::new("alerts1").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, P, 50, 1).await;
    assert!(firing(&conns).await.is_empty(), "a sale without drift raises nothing");

    let mut r = redis.conn().await;
    let _: i64 = redis::cmd("INCRBY").arg(conns.keys.stock(P)).arg(4).query_async(&mut r).await.unwrap();
    let now = firing(&conns).await;
    assert_eq!(now.len(), 1, "{now:?}");
    assert_eq!((now[0].key.as_str(), now[0].kind, now[0].value), ("drift:41", AlertKind::DriftConfirmed, Some(4)));

    let ack = acks::acknowledge(&conns, &now, "drift:41", "looking: a manual stock load went to Redis only", None)
        .await
        .unwrap();
    let (server_user,): (String,) =
        sqlx::query_as("SELECT SUBSTRING_INDEX(USER(), '@', 1)").fetch_one(&pool).await.unwrap();
    assert_eq!(ack.acked_by, server_user, "who acknowledged is the server's word");
    let taken = acks::acknowledge(&conns, &now, "drift:41", "me too", None).await;
    assert!(matches!(taken, Err(AlertError::AlreadyAcknowledged(_))), "{taken:?}");

    // Still firing: the acknowledgement stays.
    let still = firing(&conns).await;
    assert!(acks::settle(&conns, &still, &[]).await.unwrap().is_empty());
    assert_eq!(acks::states(&conns, &still).await.unwrap()[0].acknowledged.as_ref().map(|a| a.id), Some(ack.id));

    // Repaired: the alert clears and its acknowledgement closes by itself, once.
    rewrite::rewrite(&conns, &RewriteRequest::new(P, "alert drift:41")).await.unwrap();
    let cleared = firing(&conns).await;
    assert!(cleared.is_empty(), "{cleared:?}");
    let closed = acks::settle(&conns, &cleared, &[]).await.unwrap();
    assert_eq!(closed.iter().map(|(a, why)| (a.id, *why)).collect::<Vec<_>>(), [(ack.id, "cleared")]);
    assert!(acks::settle(&conns, &cleared, &[]).await.unwrap().is_empty(), "closed once");
    assert!(acks::open(&conns).await.unwrap().is_empty());

    assert_eq!(audited(&pool, "alert.ack").await, [(server_user.clone(), "drift:41".to_string())]);
    assert_eq!(audited(&pool, "alert.ack.closed").await, [(server_user, "drift:41".to_string())]);
}

#[sqlx::test(migrations = "./migrations")]
async fn an_acknowledgement_needs_a_reason_and_a_firing_alert_and_ends_when_its_time_is_up(pool: MySqlPool) {
    let redis = TestRedis::new("alerts2").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, P, 50, 1).await;
    let mut r = redis.conn().await;
    let _: () = redis::cmd("DEL").arg(conns.keys.stock(P)).query_async(&mut r).await.unwrap();
    let now = firing(&conns).await;
    assert_eq!(now.iter().map(|a| a.key.as_str()).collect::<Vec<_>>(), ["key_missing:41"]);

    let blank = acks::acknowledge(&conns, &now, "key_missing:41", "  ", None).await;
    assert!(matches!(blank, Err(AlertError::NoReason)), "{blank:?}");
    let unknown = acks::acknowledge(&conns, &now, "drift:41", "why not", None).await;
    assert!(matches!(unknown, Err(AlertError::NotFiring(_))), "{unknown:?}");

    let past = chrono::Utc::now().naive_utc() - chrono::Duration::seconds(1);
    let ack = acks::acknowledge(&conns, &now, "key_missing:41", "warming it up by hand", Some(past)).await.unwrap();
    let closed = acks::settle(&conns, &firing(&conns).await, &[]).await.unwrap();
    assert_eq!(closed.iter().map(|(a, why)| (a.id, *why)).collect::<Vec<_>>(), [(ack.id, "expired")]);
    // The alert still fires, and may be taken again.
    acks::acknowledge(&conns, &firing(&conns).await, "key_missing:41", "still on it", None).await.unwrap();
}
