//! The CLI over TLS (issue 52): a profile with TLS files, and the variables alone, reach a
//! Redis and a MariaDB that speak mutual TLS only; `profile show` says what the connection
//! used; a wrong CA is one line.

use std::process::{Command, Output};

use crate::commands::assert_one_line_error;
use crate::support;
use support::tls_servers::{Certs, TlsMariadb, TlsRedis};

fn stockguard(config: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_stockguard"));
    cmd.args(args).env("STOCKGUARD_CONFIG_DIR", config).env("RUST_BACKTRACE", "1");
    for k in support::PROFILE_OVERRIDES {
        cmd.env_remove(k);
    }
    cmd.envs(env.iter().copied());
    cmd.output().unwrap()
}

fn succeeded(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    stdout
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
    let certs = Certs::make();
    let redis = TlsRedis::start(&certs, "server").await;
    let db = TlsMariadb::start(&certs).await;
    let config = tempfile::tempdir().unwrap();
    let (ca, cert, key) = (certs.file("ca.pem"), certs.file("client.pem"), certs.file("client.key"));
    let (mysql_url, redis_url) = (db.url(), redis.url());
    #[rustfmt::skip]
    let add = [
        "profile", "add", "managed", "--environment", "production", "--role", "admin",
        "--mysql-url", &mysql_url, "--mysql-ca", &ca, "--mysql-cert", &cert, "--mysql-key", &key,
        "--redis-url", &redis_url, "--redis-ca", &ca, "--redis-cert", &cert, "--redis-key", &key,
    ];
    succeeded(&stockguard(config.path(), &add, &[]));
    succeeded(&stockguard(config.path(), &["--profile", "managed", "migrate"], &[]));
    let shown = succeeded(&stockguard(config.path(), &["profile", "show", "managed"], &[]));
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
    assert_one_line_error(&stockguard(config.path(), &plain, &[]), "needs a `rediss://` URL");
    let listed = succeeded(&stockguard(config.path(), &["profile", "list"], &[]));
    assert!(!listed.contains("plain"), "{listed}");
}
