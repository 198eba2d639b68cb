//! Production as it is (issue 52): a Redis and a MariaDB that speak TLS only to a client that
//! shows a certificate their CA signed, reached with the CA pinned. An exact reading, a
//! rewrite, a degrade toggle and an engine's orders all work over them; a wrong CA, a client
//! certificate the server does not trust and a server certificate the CA did not sign are
//! each refused in one line; a production sale reached in clear says so on the health strip.

use crate::sale;
use crate::support;

use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::connect::{ConnectError, Connections};
use stockguard_core::profile::{ConnectionSettings, EnvironmentKind, SslMode, Tls};
use stockguard_core::recon::{read_products, DriftStatus};
use stockguard_core::rewrite::{self, Outcome, RewriteRequest};
use stockguard_core::switch::exit::DEFAULT_STALE_AFTER;
use stockguard_core::switch::{self, ExitOptions, Mode, Scope};
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use support::tls_servers::{Certs, TlsCluster, TlsMariadb, TlsRedis};
use support::waits::wait_for;

const PRODUCT: u64 = 5201;

fn settings(environment: EnvironmentKind, db: &TlsMariadb, redis: &TlsRedis, tls: Tls) -> ConnectionSettings {
    ConnectionSettings::from_urls(environment, &db.url(), &redis.url(), &support::unique_prefix("tls")).with_tls(tls)
}

/// The one line a refused connection says.
fn one_line(err: &ConnectError) -> String {
    let line = err.to_string();
    eprintln!("refused: {line}");
    assert!(!line.contains('\n'), "one line: {line}");
    line
}

async fn orders_by_source(pool: &MySqlPool, source: &str) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE source = ?").bind(source).fetch_one(pool).await.unwrap()
}

async fn buy(url: &str, user: u64) -> reqwest::StatusCode {
    buy_of(url, PRODUCT, user).await
}

async fn buy_of(url: &str, product: u64, user: u64) -> reqwest::StatusCode {
    let body =
        serde_json::json!({"user_id": user, "product_id": product, "qty": 1, "idempotency_key": format!("tls{user}")});
    reqwest::Client::new().post(format!("{url}/orders")).json(&body).send().await.unwrap().status()
}

#[tokio::test]
async fn a_reading_a_rewrite_a_degrade_toggle_and_an_engines_orders_run_over_mutual_tls_with_pinned_cas() {
    let certs = Certs::make();
    let redis = TlsRedis::start(&certs, "server").await;
    let db = TlsMariadb::start(&certs).await;
    let conns = Connections::open(settings(EnvironmentKind::Staging, &db, &redis, certs.tls()))
        .await
        .expect("mutual TLS with the pinned CA connects to both servers");
    conns.migrate().await.unwrap();

    // The connection says what it used, and the server agrees: the session is encrypted.
    let t = &conns.transport;
    assert_eq!(t.mysql_mode, Some(SslMode::VerifyIdentity));
    assert!(t.mysql_tls.as_deref().is_some_and(|tls| tls.starts_with("TLSv1.")), "{t:?}");
    assert!(t.mysql_client_cert && t.redis_tls && t.redis_ca_pinned && t.redis_client_cert, "{t:?}");
    let cipher: (String, String) =
        sqlx::query_as("SHOW SESSION STATUS LIKE 'Ssl_cipher'").fetch_one(&conns.mysql).await.unwrap();
    assert!(!cipher.1.is_empty(), "MariaDB says the session is not encrypted");
    let subject: String = sqlx::query_scalar("SELECT CURRENT_USER()").fetch_one(&conns.mysql).await.unwrap();
    assert_eq!(subject, "tls@%", "the account that must show a client certificate");

    // An engine serves orders over the TLS Redis.
    sale::open_sale(&conns, PRODUCT, 100, 1).await;
    let config = EngineConfig {
        instance_id: "tls-engine".into(),
        batch_size: 20,
        close_interval: Duration::from_millis(50),
        switch_poll: Duration::from_millis(50),
        ..EngineConfig::default()
    };
    let state = EngineState::new(conns.mysql.clone(), conns.redis.clone(), conns.keys.clone(), config);
    let (url, stop, engine) = sale::spawn_engine(state).await;
    for user in 1..=3 {
        assert_eq!(buy(&url, user).await, 202, "an order through the TLS Redis is accepted");
    }
    wait_for("the engine persisted its orders", Duration::from_secs(10), async || {
        orders_by_source(&conns.mysql, "REDIS").await == 3
    })
    .await;

    // An exact reading over both TLS connections.
    let mut r = conns.redis.clone();
    let reading = read_products(&conns.mysql, &mut r, &conns.keys, &[PRODUCT]).await.unwrap().remove(0);
    assert_eq!(
        (reading.redis_stock, reading.drift, reading.status),
        (Some(97), Some(0), DriftStatus::Ok),
        "{reading:?}"
    );

    // A rewrite repairs drift put into the TLS Redis.
    let _: () = redis::cmd("SET").arg(conns.keys.stock(PRODUCT)).arg(90).query_async(&mut r).await.unwrap();
    let result = rewrite::rewrite(&conns, &RewriteRequest::new(PRODUCT, "over TLS")).await.unwrap();
    assert_eq!((result.outcome, result.after, result.drift_after), (Outcome::Applied, Some(97), Some(0)));

    // The degrade switch: the engine applies it, sells through the DB, and comes back.
    let toggled =
        switch::enter_db_mode(&conns, Scope::Global, "TLS drill", Duration::from_secs(5), DEFAULT_STALE_AFTER, &|_| {})
            .await
            .unwrap();
    assert_eq!((toggled.ack.applied, toggled.ack.live), (1, 1), "{:?}", toggled.ack);
    assert_eq!(buy(&url, 4).await, 202);
    assert_eq!(orders_by_source(&conns.mysql, "DB").await, 1, "the DB path sold it");
    let report =
        switch::guided_exit(&conns, &ExitOptions::new(Scope::Global, "TLS drill over"), &|_| {}).await.unwrap();
    assert!(report.not_back_on_redis.is_empty(), "{report:?}");
    assert_eq!(switch::store::read_view(&conns.mysql).await.unwrap().mode_for(PRODUCT), Mode::Normal);
    assert_eq!(buy(&url, 5).await, 202);
    wait_for("the order after the exit went through Redis", Duration::from_secs(10), async || {
        orders_by_source(&conns.mysql, "REDIS").await == 4
    })
    .await;
    let reading = read_products(&conns.mysql, &mut r, &conns.keys, &[PRODUCT]).await.unwrap().remove(0);
    assert_eq!((reading.redis_stock, reading.drift), (Some(95), Some(0)), "{reading:?}");

    let _ = stop.send(());
    engine.await.unwrap();
}

#[tokio::test]
async fn a_wrong_ca_is_refused_in_one_line_by_redis_and_by_mysql() {
    let certs = Certs::make();
    let redis = TlsRedis::start(&certs, "server").await;
    let db = TlsMariadb::start(&certs).await;
    let mut wrong = certs.tls();
    wrong.redis.ca = Some(certs.file("wrong_ca.pem"));
    let err = Connections::open(settings(EnvironmentKind::Staging, &db, &redis, wrong)).await.unwrap_err();
    assert!(matches!(err, ConnectError::RedisTls { .. }), "{err}");
    assert!(one_line(&err).contains("not signed by the CA we trust (invalid peer certificate: UnknownIssuer)"));

    let mut wrong = certs.tls();
    wrong.mysql.files.ca = Some(certs.file("wrong_ca.pem"));
    let err = Connections::open(settings(EnvironmentKind::Staging, &db, &redis, wrong)).await.unwrap_err();
    assert!(matches!(err, ConnectError::MysqlTls { .. }), "{err}");
    assert!(one_line(&err).contains("not signed by the CA we trust (invalid peer certificate: UnknownIssuer)"));
}

#[tokio::test]
async fn a_client_certificate_the_servers_ca_did_not_sign_is_refused_in_one_line() {
    let certs = Certs::make();
    let redis = TlsRedis::start(&certs, "server").await;
    let db = TlsMariadb::start(&certs).await;
    let rogue = |tls: &mut Tls| {
        tls.redis.cert = Some(certs.file("rogue_client.pem"));
        tls.redis.key = Some(certs.file("rogue_client.key"));
    };
    let mut wrong = certs.tls();
    rogue(&mut wrong);
    let err = Connections::open(settings(EnvironmentKind::Staging, &db, &redis, wrong)).await.unwrap_err();
    assert!(matches!(err, ConnectError::RedisTls { .. }), "{err}");
    assert!(one_line(&err).contains("the server did not accept our client certificate"));

    let mut wrong = certs.tls();
    wrong.mysql.files.cert = Some(certs.file("rogue_client.pem"));
    wrong.mysql.files.key = Some(certs.file("rogue_client.key"));
    let err = Connections::open(settings(EnvironmentKind::Staging, &db, &redis, wrong)).await.unwrap_err();
    assert!(matches!(err, ConnectError::MysqlTls { .. }), "{err}");
    assert!(one_line(&err).contains("the server did not accept our client certificate"));

    // No certificate at all: the account refuses the connection.
    let mut none = certs.tls();
    none.mysql.files.cert = None;
    none.mysql.files.key = None;
    let err = Connections::open(settings(EnvironmentKind::Staging, &db, &redis, none)).await.unwrap_err();
    assert!(matches!(err, ConnectError::MysqlAccessDenied { .. }), "{err}");
}

#[tokio::test]
async fn a_redis_whose_certificate_the_pinned_ca_did_not_sign_is_refused_in_one_line() {
    let certs = Certs::make();
    let rogue = TlsRedis::start(&certs, "rogue_server").await;
    let db = TlsMariadb::start(&certs).await;
    let err = Connections::open(settings(EnvironmentKind::Staging, &db, &rogue, certs.tls())).await.unwrap_err();
    assert!(matches!(err, ConnectError::RedisTls { .. }), "{err}");
    let line = one_line(&err);
    assert!(line.contains("not signed by the CA we trust") && line.contains("STOCKGUARD_REDIS_CA"), "{line}");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_production_sale_reached_in_clear_says_so_on_the_health_strip_and_over_tls_does_not(pool: MySqlPool) {
    let plain = support::TestRedis::new("clear").await;
    let conns = support::connections(&pool, &plain, EnvironmentKind::Production).await;
    let health = stockguard_core::health::probe(&conns, &[]).await.unwrap();
    assert_eq!(health.in_clear, ["MySQL", "Redis"], "{}", health.transport);
    let staging = support::connections(&pool, &plain, EnvironmentKind::Staging).await;
    assert!(stockguard_core::health::probe(&staging, &[]).await.unwrap().in_clear.is_empty());

    let certs = Certs::make();
    let redis = TlsRedis::start(&certs, "server").await;
    let db = TlsMariadb::start(&certs).await;
    let sealed = Connections::open(settings(EnvironmentKind::Production, &db, &redis, certs.tls())).await.unwrap();
    sealed.migrate().await.unwrap();
    let health = stockguard_core::health::probe(&sealed, &[]).await.unwrap();
    assert!(health.in_clear.is_empty(), "{}", health.transport);
    let said = health.transport.to_string();
    assert!(said.contains("VERIFY_IDENTITY") && said.contains("pinned CA"), "{said}");
    assert!(health.transport.redis_ca_pinned && health.transport.mysql_tls.is_some(), "{said}");
}

#[tokio::test]
async fn a_redis_cluster_over_mutual_tls_serves_an_engines_orders_an_exact_reading_and_a_rewrite() {
    let certs = Certs::make();
    let cluster = TlsCluster::start(&certs).await;
    let db = TlsMariadb::start(&certs).await;
    let settings = ConnectionSettings::from_urls(
        EnvironmentKind::Staging,
        &db.url(),
        &cluster.url(),
        &support::unique_prefix("tlsc"),
    )
    .with_tls(certs.tls());
    let conns = Connections::open(settings).await.expect("mutual TLS to every node of the cluster");
    assert!(conns.redis.is_cluster() && conns.transport.redis_tls && conns.transport.redis_client_cert);
    conns.migrate().await.unwrap();
    // Products on slots of different masters (`--cluster create` gives each a third, in order).
    let master = |p: u64| match stockguard_core::redis_link::product_slot(p) {
        0..=5460 => 0,
        5461..=10922 => 1,
        _ => 2,
    };
    let products: Vec<u64> = (PRODUCT..PRODUCT + 40).fold(Vec::new(), |mut picked, p| {
        if picked.iter().all(|&q| master(q) != master(p)) {
            picked.push(p);
        }
        picked
    });
    assert_eq!(products.len(), 3, "one product per master");
    for &p in &products {
        sale::open_sale(&conns, p, 50, 1).await;
    }
    let config = EngineConfig { instance_id: "tls-cluster-engine".into(), batch_size: 20, ..EngineConfig::default() };
    let state = EngineState::new(conns.mysql.clone(), conns.redis.clone(), conns.keys.clone(), config);
    let (url, stop, engine) = sale::spawn_engine(state).await;
    for (user, &p) in (1..).zip(&products) {
        assert_eq!(buy_of(&url, p, user).await, 202, "an order on product {p} through the TLS cluster");
    }
    wait_for("the engine persisted its orders", Duration::from_secs(10), async || {
        orders_by_source(&conns.mysql, "REDIS").await == 3
    })
    .await;
    let mut r = conns.redis.clone();
    let readings = read_products(&conns.mysql, &mut r, &conns.keys, &products).await.unwrap();
    assert!(readings.iter().all(|x| x.redis_stock == Some(49) && x.drift == Some(0)), "{readings:?}");
    let _: () = redis::cmd("SET").arg(conns.keys.stock(products[1])).arg(40).query_async(&mut r).await.unwrap();
    let result = rewrite::rewrite(&conns, &RewriteRequest::new(products[1], "cluster over TLS")).await.unwrap();
    assert_eq!((result.outcome, result.after, result.drift_after), (Outcome::Applied, Some(49), Some(0)));
    let _ = stop.send(());
    engine.await.unwrap();
}
