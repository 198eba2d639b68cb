//! Saving and deleting profiles with their passwords: the password goes to the secret store,
//! the profiles file only remembers that there is one; without a keychain, it remembers which
//! passwords the environment gives.

use secrecy::SecretString;
use stockguard_core::profile::manage::{delete, list, save, save_with_env};
use stockguard_core::profile::secrets::SecretLookup;
use stockguard_core::profile::{EnvironmentKind, Profile, ProfileError, ProfileStore, Role, SecretSlot, SecretStore};

use crate::support::keychain::{NoKeychain, Recorded};

fn profile() -> Profile {
    Profile {
        environment: EnvironmentKind::Production,
        mysql_url: "mysql://app@db:3306/sale".into(),
        mysql_replica_url: Some("mysql://app@replica:3306/sale".into()),
        redis_url: "redis://cache:6379/".into(),
        key_prefix: "sale1".into(),
        role: Role::Oncall,
        read_only: false,
        thresholds: Default::default(),
        adapter: None,
        state_url: None,
        tls: Default::default(),
        ssh_tunnel: None,
        secrets: Default::default(),
        passwords_from_env: Default::default(),
    }
}

#[test]
fn a_saved_password_goes_to_the_keychain_and_never_into_the_profiles_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profiles.toml");
    let mut store = ProfileStore::load(&path).unwrap();
    let keychain = Recorded::default();
    let pw = vec![(SecretSlot::Mysql, SecretString::from("hunter2".to_string()))];
    save(&mut store, &keychain, "prod", profile(), &pw).unwrap();

    let file = std::fs::read_to_string(&path).unwrap();
    assert!(!file.contains("hunter2"), "{file}");
    assert!(matches!(keychain.get("prod", SecretSlot::Mysql), SecretLookup::Found(_)));
    let listed = list(&ProfileStore::load(&path).unwrap());
    assert_eq!(listed[0].name, "prod");
    assert_eq!(listed[0].profile.secrets.iter().copied().collect::<Vec<_>>(), vec![SecretSlot::Mysql]);
}

#[test]
fn editing_without_a_password_keeps_the_stored_one_and_dropping_the_replica_drops_its_password() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = ProfileStore::load(&dir.path().join("p.toml")).unwrap();
    let keychain = Recorded::default();
    let pws = vec![
        (SecretSlot::Mysql, SecretString::from("a".to_string())),
        (SecretSlot::MysqlReplica, SecretString::from("b".to_string())),
    ];
    save(&mut store, &keychain, "prod", profile(), &pws).unwrap();
    let edited = Profile { mysql_replica_url: None, ..profile() };
    save(&mut store, &keychain, "prod", edited, &[]).unwrap();
    let secrets: Vec<SecretSlot> = store.get("prod").unwrap().secrets.iter().copied().collect();
    assert_eq!(secrets, vec![SecretSlot::Mysql]);
    assert!(matches!(keychain.get("prod", SecretSlot::MysqlReplica), SecretLookup::Missing));
}

#[test]
fn without_a_keychain_the_profile_is_saved_and_records_which_passwords_the_environment_gives() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.toml");
    let mut store = ProfileStore::load(&path).unwrap();
    // A Redis password typed, STOCKGUARD_MYSQL_PASSWORD set, nothing for the replica.
    let pw = vec![(SecretSlot::Redis, SecretString::from("typed-x".to_string()))];
    let saved =
        save_with_env(&mut store, &NoKeychain, "prod", profile(), &pw, &|slot| slot == SecretSlot::Mysql).unwrap();

    assert!(saved.no_keychain.is_some());
    let said: Vec<(SecretSlot, &str)> = saved.from_env.iter().map(|e| (e.slot, e.env_var.as_str())).collect();
    assert_eq!(
        said,
        [(SecretSlot::Mysql, "STOCKGUARD_MYSQL_PASSWORD"), (SecretSlot::Redis, "STOCKGUARD_REDIS_PASSWORD")]
    );
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(!file.contains("typed-x"), "{file}");
    let kept = ProfileStore::load(&path).unwrap().get("prod").unwrap().clone();
    assert!(kept.secrets.is_empty());
    assert_eq!(kept.passwords_from_env.into_iter().collect::<Vec<_>>(), [SecretSlot::Mysql, SecretSlot::Redis]);
}

#[test]
fn a_password_asked_of_the_environment_leaves_the_keychain_and_one_stored_later_comes_back_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = ProfileStore::load(&dir.path().join("p.toml")).unwrap();
    let keychain = Recorded::default();
    save(&mut store, &keychain, "prod", profile(), &[(SecretSlot::Mysql, SecretString::from("a".to_string()))])
        .unwrap();
    let asked = Profile { passwords_from_env: [SecretSlot::Mysql].into_iter().collect(), ..profile() };
    let saved = save(&mut store, &keychain, "prod", asked, &[]).unwrap();
    assert_eq!(saved.no_keychain, None);
    assert_eq!(saved.from_env.iter().map(|e| e.slot).collect::<Vec<_>>(), [SecretSlot::Mysql]);
    assert!(store.get("prod").unwrap().secrets.is_empty());
    assert!(matches!(keychain.get("prod", SecretSlot::Mysql), SecretLookup::Missing));

    save(&mut store, &keychain, "prod", profile(), &[(SecretSlot::Mysql, SecretString::from("b".to_string()))])
        .unwrap();
    let kept = store.get("prod").unwrap();
    assert_eq!(kept.secrets.iter().copied().collect::<Vec<_>>(), [SecretSlot::Mysql]);
    assert!(kept.passwords_from_env.is_empty());
}

#[test]
fn deleting_a_profile_removes_its_keychain_entries() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = ProfileStore::load(&dir.path().join("p.toml")).unwrap();
    let keychain = Recorded::default();
    save(&mut store, &keychain, "prod", profile(), &[(SecretSlot::Redis, SecretString::from("r".to_string()))])
        .unwrap();
    let notices = delete(&mut store, &keychain, "prod").unwrap();
    assert!(notices.is_empty());
    assert!(matches!(keychain.get("prod", SecretSlot::Redis), SecretLookup::Missing));
    assert!(matches!(delete(&mut store, &keychain, "prod"), Err(ProfileError::UnknownProfile { .. })));
}
