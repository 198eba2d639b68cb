//! Issue 52's "no keychain": on a machine without an OS keychain (here a session bus that is
//! not there, so no Secret Service), `profile add` records which passwords the environment
//! gives, and the variables the docs name then work for every server of the profile.

use std::process::Output;

use sqlx::MySqlPool;
use stockguard_core::profile::{ProfileStore, SecretSlot};

use crate::commands::assert_one_line_error;
use crate::support;
use crate::tls::{self, succeeded};
use support::redis_server::RedisServer;

/// The CLI on a machine without a keychain: the session bus it would find the Secret Service on
/// does not exist (whatever this machine has).
fn stockguard(config: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let bus = format!("unix:path={}/no-bus", config.display());
    tls::stockguard(config, args, &[&[("DBUS_SESSION_BUS_ADDRESS", bus.as_str())], env].concat())
}

#[sqlx::test(migrations = "./migrations")]
async fn a_profile_added_without_a_keychain_connects_with_the_passwords_the_docs_name(pool: MySqlPool) {
    // A MySQL account and a Redis user that both need a password.
    let account = support::accounts::account(&pool, "nokc").await;
    let mut url = url::Url::parse(&account).unwrap();
    let mysql_password = url.password().unwrap().to_string();
    url.set_password(None).unwrap();
    let mysql_url = url.to_string();
    let redis = RedisServer::start().await;
    let mut admin = redis.conn().await;
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("console")
        .arg("on")
        .arg(">redis-pw")
        .arg("~*")
        .arg("+@all")
        .query_async(&mut admin)
        .await
        .unwrap();
    let redis_url = format!("redis://console@127.0.0.1:{}/", redis.port);
    let config = tempfile::tempdir().unwrap();

    // The MySQL password's variable is set when the profile is made; Redis's is asked for.
    #[rustfmt::skip]
    let add = [
        "profile", "add", "jump", "--environment", "staging", "--role", "admin",
        "--mysql-url", &mysql_url, "--redis-url", &redis_url, "--password-from-env", "redis",
    ];
    let said = succeeded(&stockguard(config.path(), &add, &[("STOCKGUARD_MYSQL_PASSWORD", &mysql_password)]));
    assert!(said.contains("no OS keychain here"), "{said}");
    assert!(said.contains("the mysql password of `jump` is read from STOCKGUARD_MYSQL_PASSWORD"), "{said}");
    assert!(said.contains("the redis password of `jump` is read from STOCKGUARD_REDIS_PASSWORD"), "{said}");
    let path = config.path().join("profiles.toml");
    let saved = ProfileStore::load(&path).unwrap().get("jump").unwrap().clone();
    assert_eq!(saved.passwords_from_env.into_iter().collect::<Vec<_>>(), [SecretSlot::Mysql, SecretSlot::Redis]);
    assert!(saved.secrets.is_empty());
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(!file.contains(&mysql_password) && !file.contains("redis-pw"), "{file}");

    // With both variables the profile connects to both servers, each with its password.
    let both = [("STOCKGUARD_MYSQL_PASSWORD", mysql_password.as_str()), ("STOCKGUARD_REDIS_PASSWORD", "redis-pw")];
    let shown = succeeded(&stockguard(config.path(), &["profile", "show", "jump"], &both));
    assert!(shown.contains("connected"), "{shown}");
    succeeded(&stockguard(config.path(), &["--profile", "jump", "migrate"], &both));

    // A variable missing is one line naming it; a wrong one is the server's refusal.
    let out = stockguard(config.path(), &["profile", "show", "jump"], &both[..1]);
    assert_one_line_error(&out, "takes its redis password from STOCKGUARD_REDIS_PASSWORD, which is not set");
    let out = stockguard(
        config.path(),
        &["profile", "show", "jump"],
        &[("STOCKGUARD_MYSQL_PASSWORD", "wrong"), ("STOCKGUARD_REDIS_PASSWORD", "redis-pw")],
    );
    assert_one_line_error(&out, "using password: YES");

    // set-password without a keychain asks for nothing and records the slot the same way.
    let out = stockguard(config.path(), &["profile", "set-password", "jump", "--slot", "mysql"], &[]);
    let said = succeeded(&out);
    assert!(said.contains("read from STOCKGUARD_MYSQL_PASSWORD"), "{said}");
    support::accounts::forget(&pool).await;
}
