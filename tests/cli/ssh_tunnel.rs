//! The CLI through an SSH bastion (issue 52): `profile add --ssh-tunnel --ssh-key
//! --ssh-known-hosts` saves a profile whose `profile show` connects through the test's own
//! `sshd`; the variables alone (`STOCKGUARD_SSH_*`) do the same, and a known_hosts file without
//! the bastion's key is one line with its fingerprint.

use std::time::Duration;

use sqlx::MySqlPool;

use crate::commands::assert_one_line_error;
use crate::support;
use crate::tls::{stockguard, succeeded};
use support::sshd::Sshd;
use support::waits::wait_for;

#[sqlx::test(migrations = "./migrations")]
async fn a_profile_with_an_ssh_bastion_connects_through_it_and_the_variables_do_too(pool: MySqlPool) {
    let sshd = Sshd::start().await;
    let config = tempfile::tempdir().unwrap();
    let mysql_url = support::mysql_url_of(&pool).await;
    let redis_url = support::redis_url();
    let (bastion, key, known_hosts) = (sshd.url(), sshd.client_key(), sshd.known_hosts());
    let (key, known_hosts) = (key.to_str().unwrap(), known_hosts.to_str().unwrap());
    #[rustfmt::skip]
    let add = [
        "profile", "add", "jumped", "--environment", "staging", "--role", "admin",
        "--mysql-url", &mysql_url, "--redis-url", &redis_url,
        "--ssh-tunnel", &bastion, "--ssh-key", key, "--ssh-known-hosts", known_hosts,
    ];
    succeeded(&stockguard(config.path(), &add, &[]));
    let shown = succeeded(&stockguard(config.path(), &["profile", "show", "jumped"], &[]));
    assert!(shown.contains(&format!("ssh tunnel   {bastion} key={key} known_hosts={known_hosts}")), "{shown}");
    assert!(shown.lines().any(|l| l.starts_with("connected")), "{shown}");
    let mysql_port = url::Url::parse(&mysql_url).unwrap().port().unwrap();
    wait_for("sshd logs a forward to MariaDB", Duration::from_secs(10), async || {
        sshd.log().contains(&format!("target 127.0.0.1 port {mysql_port}"))
    })
    .await;

    // The variables alone, with a known_hosts file that lacks the bastion: one line.
    let empty = sshd.path("empty_known_hosts");
    std::fs::write(&empty, "").unwrap();
    let mut env = vec![
        ("STOCKGUARD_MYSQL_URL", mysql_url.as_str()),
        ("STOCKGUARD_REDIS_URL", redis_url.as_str()),
        ("STOCKGUARD_ENVIRONMENT", "staging"),
        ("STOCKGUARD_SSH_TUNNEL", bastion.as_str()),
        ("STOCKGUARD_SSH_KEY", key),
        ("STOCKGUARD_SSH_KNOWN_HOSTS", known_hosts),
    ];
    succeeded(&stockguard(config.path(), &["products"], &env));
    env.retain(|(k, _)| *k != "STOCKGUARD_SSH_KNOWN_HOSTS");
    env.push(("STOCKGUARD_SSH_KNOWN_HOSTS", empty.to_str().unwrap()));
    let out = stockguard(config.path(), &["products"], &env);
    assert_one_line_error(&out, &format!("offered an unknown host key ssh-ed25519 {}", sshd.host_key_fingerprint()));
}
