//! Issue 52's "no keychain" in the window: on a machine without an OS keychain the profile
//! form saves the profile all the same, says which variable gives the password, and the
//! profile connects with the password that variable gives.

use sqlx::MySqlPool;
use stockguard_core::profile::{ProfileStore, SecretSlot};

use crate::support::{self, TestRedis};
use crate::{choose, click, one_window_at_a_time, open_app_with, sandbox_profile, type_into, wait_text};

#[sqlx::test(migrations = "../migrations")]
async fn a_profile_saved_in_the_window_without_a_keychain_connects_with_the_password_its_variable_gives(
    pool: MySqlPool,
) {
    // Two TLS back ends are linked into the test (ring, aws-lc); pick one for the WebDriver client.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let redis = TestRedis::new("e2e-nokc").await;
    let (config, _) = sandbox_profile(&pool, &redis).await;
    // A MySQL account that needs a password; the profile's URL holds none.
    let mut url = url::Url::parse(&support::accounts::account(&pool, "nokcwin").await).unwrap();
    let password = url.password().unwrap().to_string();
    url.set_password(None).unwrap();

    let _one_window = one_window_at_a_time().await;
    // No session bus, so no Secret Service: a machine without a keychain, whatever this one has.
    let env = [
        ("STOCKGUARD_MYSQL_PASSWORD", password.clone()),
        ("DBUS_SESSION_BUS_ADDRESS", format!("unix:path={}/no-bus", config.path().display())),
    ];
    let (driver, client) = open_app_with(config.path(), "e2e-nokc", &env).await;
    let outcome = async {
        let c = &client;
        click(c, "#nav [data-screen=connections]").await;
        wait_text(c, "#profiles tbody tr[data-profile=sandbox] td.name", "the sandbox profile is listed", |t| {
            t.starts_with("sandbox")
        })
        .await;
        type_into(c, "#profile-form [name=name]", "jump").await;
        choose(c, "#profile-form [name=environment]", "staging").await;
        type_into(c, "#profile-form [name=mysqlUrl]", url.as_str()).await;
        type_into(c, "#profile-form [name=redisUrl]", &redis.url).await;
        type_into(c, "#profile-form [name=keyPrefix]", redis.keys.prefix()).await;
        // A password typed has nowhere to go here: the profile is saved all the same.
        type_into(c, "#profile-form [name=mysqlPassword]", &password).await;
        click(c, "#profile-save").await;
        let said = wait_text(c, "#notice", "the save says where the password comes from", |t| {
            t.contains("STOCKGUARD_MYSQL_PASSWORD")
        })
        .await;
        assert!(said.contains("no OS keychain"), "{said}");
        wait_text(c, "#profiles tbody tr[data-profile=jump] td.passwords", "the table says where it comes from", |t| {
            t == "mysql (environment)"
        })
        .await;
        click(c, "#profiles tbody tr[data-profile=jump] button.test").await;
        wait_text(c, "#notice", "the profile connects with the variable's password", |t| t.contains("jump: MySQL"))
            .await;
    }
    .await;
    client.close().await.expect("session closes");
    drop(driver);
    let saved = ProfileStore::load(&config.path().join("profiles.toml")).unwrap().get("jump").unwrap().clone();
    assert_eq!(saved.passwords_from_env.into_iter().collect::<Vec<_>>(), [SecretSlot::Mysql]);
    assert!(saved.secrets.is_empty());
    let file = std::fs::read_to_string(config.path().join("profiles.toml")).unwrap();
    assert!(!file.contains(&password), "{file}");
    support::accounts::forget(&pool).await;
    outcome
}
