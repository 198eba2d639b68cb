//! Production behind a jump host (issue 52): the sale's MariaDB and Redis reached through a
//! real OpenSSH bastion (the test's own `sshd`), an exact reading over the forwards, the
//! bastion's log showing the `direct-tcpip` channels it opened to each, and a host key we do
//! not trust refused in one line with its fingerprint and the command that trusts it.

use crate::sale;
use crate::support;

use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::connect::{ConnectError, Connections};
use stockguard_core::profile::{ConnectionSettings, EnvironmentKind};
use stockguard_core::recon::{read_products, DriftStatus};
use stockguard_core::ssh_tunnel::{Bastion, BastionConfig, TunnelError};
use support::sshd::Sshd;
use support::waits::wait_for;
use support::TestRedis;

const PRODUCT: u64 = 5301;

fn bastion(sshd: &Sshd, known_hosts: std::path::PathBuf) -> BastionConfig {
    BastionConfig {
        address: sshd.url().parse().expect("the test's bastion URL parses"),
        key: sshd.client_key(),
        passphrase: None,
        known_hosts,
    }
}

/// `host port` of a URL, as sshd logs the target of a forward.
fn target_of(url: &str) -> String {
    let url = url::Url::parse(url).unwrap();
    format!("target {} port {}", url.host_str().unwrap(), url.port().unwrap())
}

#[sqlx::test(migrations = "./migrations")]
async fn an_exact_reading_reaches_mariadb_and_redis_through_an_ssh_bastion(pool: MySqlPool) {
    let sshd = Sshd::start().await;
    let redis = TestRedis::new("ssh").await;
    let mysql_url = support::mysql_url_of(&pool).await;
    let redis_url = format!("{}/", redis.url.trim_end_matches('/'));
    let mut settings =
        ConnectionSettings::from_urls(EnvironmentKind::Staging, &mysql_url, &redis_url, redis.keys.prefix());
    settings.ssh_tunnel = Some(bastion(&sshd, sshd.known_hosts()));
    let conns = Connections::open(settings).await.expect("MariaDB and Redis are reached through the bastion");

    sale::open_sale(&conns, PRODUCT, 100, 1).await;
    let mut r = conns.redis.clone();
    let reading = read_products(&conns.mysql, &mut r, &conns.keys, &[PRODUCT]).await.unwrap().remove(0);
    assert_eq!(
        (reading.redis_stock, reading.drift, reading.status),
        (Some(100), Some(0), DriftStatus::Ok),
        "{reading:?}"
    );

    // The bastion opened a direct-tcpip channel to each server: the reading went through it.
    let (to_mysql, to_redis) = (target_of(&mysql_url), target_of(&redis_url));
    wait_for("sshd logs the forwards to MariaDB and Redis", Duration::from_secs(10), async || {
        let log = sshd.log();
        log.contains("direct-tcpip") && log.contains(&to_mysql) && log.contains(&to_redis)
    })
    .await;
    eprintln!(
        "{}",
        sshd.log()
            .lines()
            .filter(|l| l.contains("direct-tcpip") || l.contains("target "))
            .collect::<Vec<_>>()
            .join("\n")
    );
    conns.mysql.close().await;
}

#[tokio::test]
async fn an_unknown_bastion_host_key_is_refused_in_one_line_with_its_fingerprint() {
    let sshd = Sshd::start().await;
    let empty = sshd.path("empty_known_hosts");
    std::fs::write(&empty, "").unwrap();
    let mut settings = ConnectionSettings::from_urls(
        EnvironmentKind::Production,
        "mysql://app@10.0.0.5:3306/sale",
        "redis://10.0.0.6:6379/",
        "sg",
    );
    settings.ssh_tunnel = Some(bastion(&sshd, empty.clone()));
    let err = Connections::open(settings).await.expect_err("an unknown host key is refused");
    let line = err.to_string();
    eprintln!("refused: {line}");
    assert!(matches!(&err, ConnectError::Bastion(b) if matches!(**b, TunnelError::UnknownHostKey { .. })), "{err:?}");
    assert!(!line.contains('\n'), "one line: {line}");
    assert!(line.contains(&sshd.host_key_fingerprint()), "the fingerprint: {line}");
    let trust = format!("ssh-keyscan -p {} 127.0.0.1 >> {}", sshd.port, empty.display());
    assert!(line.contains(&trust), "the command that trusts it: {line}");
    assert!(!sshd.log().contains("Accepted publickey"), "no key was offered to an untrusted server");
}

#[tokio::test]
async fn a_changed_bastion_host_key_is_refused_in_one_line() {
    let sshd = Sshd::start().await;
    let changed = sshd.known_hosts_with_another_key();
    let err = Bastion::connect(&bastion(&sshd, changed)).await.expect_err("a changed host key is refused");
    let line = err.to_string();
    eprintln!("refused: {line}");
    assert!(matches!(err, TunnelError::ChangedHostKey { line: 1, .. }), "{err:?}");
    assert!(!line.contains('\n') && line.contains(&sshd.host_key_fingerprint()), "{line}");
    assert!(line.contains("ssh-keygen -R '[127.0.0.1]:"), "{line}");
}

#[tokio::test]
async fn an_rsa_key_with_a_passphrase_opens_the_bastion_and_a_wrong_passphrase_is_one_line() {
    let sshd = Sshd::start().await;
    let key = sshd.rsa_client_key_with_passphrase("correct horse");
    let config = |passphrase: &str| BastionConfig {
        key: key.clone(),
        passphrase: Some(passphrase.to_string().into()),
        ..bastion(&sshd, sshd.known_hosts())
    };
    let bastion =
        Bastion::connect(&config("correct horse")).await.expect("the RSA key with its passphrase is accepted");
    let forward = bastion.forward("127.0.0.1", support::redis_addr().port()).await.unwrap();
    let client = redis::Client::open(format!("redis://{}/", forward.local_addr())).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.expect("Redis answers through the forward");
    let pong: String = redis::cmd("PING").query_async(&mut conn).await.unwrap();
    assert_eq!(pong, "PONG");
    wait_for("sshd accepts the RSA key", Duration::from_secs(10), async || sshd.log().contains("Accepted publickey"))
        .await;

    let err = Bastion::connect(&config("wrong")).await.expect_err("a wrong passphrase is refused");
    let line = err.to_string();
    eprintln!("refused: {line}");
    assert!(matches!(err, TunnelError::Key { .. }) && !line.contains('\n'), "{err:?}");
    assert!(line.contains("STOCKGUARD_SSH_KEY_PASSPHRASE"), "{line}");
    let err = Bastion::connect(&BastionConfig { passphrase: None, ..config("") }).await.expect_err("no passphrase");
    eprintln!("refused: {err}");
    assert!(err.to_string().contains("the key has a passphrase: set STOCKGUARD_SSH_KEY_PASSPHRASE"), "{err}");
}
