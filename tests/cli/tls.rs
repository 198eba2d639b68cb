//! The CLI over TLS (issue 52): a profile with TLS files, and the variables alone, reach a
//! Redis and a MariaDB that speak mutual TLS only; `profile show` says what the connection
//! used; a wrong CA is one line.

use std::process::{Command, Output};

use crate::commands::assert_one_line_error;
use crate::support;
use support::tls_servers::{Certs, TlsMariadb, TlsRedis};

/// The CLI with the profiles of `config` and `env`; no profile variable of the test run leaks in.
pub(crate) fn stockguard(config: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_stockguard"));
    cmd.args(args).env("STOCKGUARD_CONFIG_DIR", config).env("RUST_BACKTRACE", "1");
    for k in support::PROFILE_OVERRIDES {
        cmd.env_remove(k);
    }
    cmd.envs(env.iter().copied());
    cmd.output().unwrap()
}

pub(crate) fn succeeded(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

/// Servers that speak mutual TLS only, and a profile `managed` of `environment` naming them
/// with the CA and the client certificate (`extra` flags added), its database migrated.
struct Managed {
    certs: Certs,
    _redis: TlsRedis,
    _db: TlsMariadb,
    config: tempfile::TempDir,
    mysql_url: String,
    redis_url: String,
}

impl Managed {
    async fn start(environment: &str, extra: &[&str]) -> Self {
        let certs = Certs::make();
        let redis = TlsRedis::start(&certs, "server").await;
        let db = TlsMariadb::start(&certs).await;
        let config = tempfile::tempdir().unwrap();
        let (ca, cert, key) = (certs.file("ca.pem"), certs.file("client.pem"), certs.file("client.key"));
        let (mysql_url, redis_url) = (db.url(), redis.url());
        #[rustfmt::skip]
        let add = [
            "profile", "add", "managed", "--environment", environment, "--role", "admin",
            "--mysql-url", &mysql_url, "--mysql-ca", &ca, "--mysql-cert", &cert, "--mysql-key", &key,
            "--redis-url", &redis_url, "--redis-ca", &ca, "--redis-cert", &cert, "--redis-key", &key,
        ];
        succeeded(&stockguard(config.path(), &[&add[..], extra].concat(), &[]));
        succeeded(&stockguard(config.path(), &["--profile", "managed", "migrate"], &[]));
        Self { certs, _redis: redis, _db: db, config, mysql_url, redis_url }
    }

    fn run(&self, args: &[&str]) -> Output {
        stockguard(self.config.path(), args, &[])
    }
}

#[tokio::test]
async fn the_variables_alone_reach_servers_that_speak_mutual_tls_and_a_wrong_ca_is_one_line() {
    let certs = Certs::make();
    let redis = TlsRedis::start(&certs, "server").await;
    let db = TlsMariadb::start(&certs).await;
    let config = tempfile::tempdir().unwrap();
    let (mysql_url, redis_url) = (db.url(), redis.url());
    let (ca, cert, key, wrong) =
        (certs.file("ca.pem"), certs.file("client.pem"), certs.file("client.key"), certs.file("wrong_ca.pem"));
    let mut env = vec![
        ("STOCKGUARD_MYSQL_URL", mysql_url.as_str()),
        ("STOCKGUARD_REDIS_URL", redis_url.as_str()),
        ("STOCKGUARD_ENVIRONMENT", "staging"),
        ("STOCKGUARD_ROLE", "admin"),
        ("STOCKGUARD_REDIS_CA", ca.as_str()),
        ("STOCKGUARD_REDIS_CERT", cert.as_str()),
        ("STOCKGUARD_REDIS_KEY", key.as_str()),
        ("STOCKGUARD_MYSQL_SSL_MODE", "VERIFY_IDENTITY"),
        ("STOCKGUARD_MYSQL_CA", ca.as_str()),
        ("STOCKGUARD_MYSQL_CERT", cert.as_str()),
        ("STOCKGUARD_MYSQL_KEY", key.as_str()),
    ];
    succeeded(&stockguard(config.path(), &["migrate"], &env));
    succeeded(&stockguard(config.path(), &["products"], &env));

    env.retain(|(k, _)| *k != "STOCKGUARD_REDIS_CA");
    env.push(("STOCKGUARD_REDIS_CA", wrong.as_str()));
    let out = stockguard(config.path(), &["products"], &env);
    assert_one_line_error(&out, "refused TLS: the server's certificate is not signed by the CA we trust");
}

#[tokio::test]
async fn a_profile_with_tls_files_shows_the_mode_and_cipher_its_connection_used() {
    let managed = Managed::start("production", &[]).await;
    let (ca, cert) = (managed.certs.file("ca.pem"), managed.certs.file("client.pem"));
    let mysql_url = managed.mysql_url.clone();
    let shown = succeeded(&managed.run(&["profile", "show", "managed"]));
    assert!(shown.contains(&format!("mysql tls    ssl-mode VERIFY_IDENTITY ca={ca} cert={cert}")), "{shown}");
    let connected = shown.lines().find(|l| l.starts_with("connected")).unwrap_or_else(|| panic!("{shown}"));
    assert!(connected.contains("MySQL ssl-mode VERIFY_IDENTITY: TLSv1."), "{connected}");
    assert!(connected.contains("client certificate; Redis: TLS, pinned CA, client certificate"), "{connected}");

    // A CA with a plain Redis URL is refused when saved, in one line, and nothing is saved.
    #[rustfmt::skip]
    let plain = [
        "profile", "add", "plain", "--environment", "production", "--mysql-url", &mysql_url,
        "--redis-url", "redis://127.0.0.1:6379/", "--redis-ca", &ca,
    ];
    assert_one_line_error(&managed.run(&plain), "needs a `rediss://` URL");
    let listed = succeeded(&managed.run(&["profile", "list"]));
    assert!(!listed.contains("plain"), "{listed}");
}

/// An engine process, killed on drop.
struct EngineProcess(std::process::Child);

impl Drop for EngineProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn the_engine_process_sells_over_the_tls_redis_and_mysql_its_profile_names() {
    let managed = Managed::start("staging", &["--key-prefix", "tlsengine"]).await;
    let settings = stockguard_core::profile::ConnectionSettings::from_urls(
        stockguard_core::profile::EnvironmentKind::Staging,
        &managed.mysql_url,
        &managed.redis_url,
        "tlsengine",
    )
    .with_tls(managed.certs.tls());
    let conns = stockguard_core::connect::Connections::open(settings).await.unwrap();
    crate::sale::open_sale(&conns, 5299, 10, 1).await;

    let addr = format!("127.0.0.1:{}", support::free_port());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_stockguard"));
    cmd.args(["--profile", "managed", "engine", "serve", "--listen", &addr])
        .env("STOCKGUARD_CONFIG_DIR", managed.config.path());
    for k in support::PROFILE_OVERRIDES {
        cmd.env_remove(k);
    }
    let _engine = EngineProcess(cmd.stdout(std::process::Stdio::null()).spawn().unwrap());
    let client = reqwest::Client::new();
    support::waits::wait_for("the engine serves", std::time::Duration::from_secs(30), async || {
        client.get(format!("http://{addr}/health")).send().await.is_ok_and(|r| r.status().is_success())
    })
    .await;
    let body = serde_json::json!({"user_id": 1, "product_id": 5299, "qty": 1, "idempotency_key": "tls-engine"});
    let status = client.post(format!("http://{addr}/orders")).json(&body).send().await.unwrap().status();
    assert_eq!(status, 202, "the engine accepted an order through the TLS Redis");
    support::waits::wait_for("the engine persisted it", std::time::Duration::from_secs(10), async || {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE product_id = 5299 AND source = 'REDIS'")
            .fetch_one(&conns.mysql)
            .await
            .unwrap();
        n == 1
    })
    .await;
}
