//! Saving and deleting profiles together with their passwords, as the desktop Connections
//! screen does: the profile goes to the profiles file, each password given goes to the
//! keychain, and nothing that was stored there is ever read back for display.

use secrecy::{ExposeSecret as _, SecretString};
use serde::{Deserialize, Serialize};

use super::secrets::SecretLookup;
use super::{validate_name, KeychainStore, Profile, ProfileError, ProfileStore, SecretSlot, SecretStore};

/// A saved profile with its name, as listed to a front end. It holds no password: only which
/// slots have one in the keychain (`profile.secrets`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct NamedProfile {
    pub name: String,
    #[serde(flatten)]
    pub profile: Profile,
}

/// Every saved profile, by name.
pub fn list(store: &ProfileStore) -> Vec<NamedProfile> {
    store.iter().map(|(name, p)| NamedProfile { name: name.to_string(), profile: p.clone() }).collect()
}

/// Saves `profile` under `name`. Passwords given (non-empty) are stored in the keychain and
/// their slots remembered; slots stored before are kept unless their URL is gone (a removed
/// replica drops its password too). Validation happens before anything is written.
pub fn save(
    store: &mut ProfileStore,
    secrets: &dyn SecretStore,
    name: &str,
    mut profile: Profile,
    passwords: &[(SecretSlot, SecretString)],
) -> Result<(), ProfileError> {
    validate_name(name)?;
    profile.validate()?;
    let mut slots = store.get(name).map(|p| p.secrets.clone()).unwrap_or_default();
    if profile.mysql_replica_url.is_none() && slots.remove(&SecretSlot::MysqlReplica) {
        let _ = secrets.delete(name, SecretSlot::MysqlReplica);
    }
    for (slot, password) in passwords.iter().filter(|(_, p)| !p.expose_secret().is_empty()) {
        if *slot == SecretSlot::MysqlReplica && profile.mysql_replica_url.is_none() {
            continue;
        }
        secrets.set(name, *slot, password).map_err(|lookup| match lookup {
            SecretLookup::Unavailable(reason) => ProfileError::CannotStoreSecret { slot: *slot, reason },
            SecretLookup::Missing | SecretLookup::Found(_) => {
                ProfileError::Keychain { slot: *slot, reason: "the keychain refused the password".into() }
            }
        })?;
        slots.insert(*slot);
    }
    profile.secrets = slots;
    store.upsert(name, profile)?;
    store.save()
}

/// Removes a profile and its keychain entries. Keychain entries that could not be removed
/// are named in the returned notices (the profile itself is gone either way).
pub fn delete(store: &mut ProfileStore, secrets: &dyn SecretStore, name: &str) -> Result<Vec<String>, ProfileError> {
    store.get(name)?;
    let removed = store.remove(name).expect("checked above");
    store.save()?;
    Ok(removed
        .secrets
        .into_iter()
        .filter_map(|slot| {
            secrets
                .delete(name, slot)
                .err()
                .map(|lookup| format!("keychain entry {name}:{slot} not removed: {lookup:?}"))
        })
        .collect())
}

/// [`list`] of the default profiles file.
pub fn list_default() -> Result<Vec<NamedProfile>, ProfileError> {
    Ok(list(&ProfileStore::load_default()?))
}

/// [`save`] to the default profiles file and the OS keychain (off the async runtime: the
/// keychain client blocks).
pub async fn save_default(
    name: String,
    profile: Profile,
    passwords: Vec<(SecretSlot, SecretString)>,
) -> Result<(), ProfileError> {
    let mut store = ProfileStore::load_default()?;
    tokio::task::spawn_blocking(move || save(&mut store, &KeychainStore, &name, profile, &passwords))
        .await
        .expect("saving a profile does not panic")
}

/// [`delete`] from the default profiles file and the OS keychain.
pub async fn delete_default(name: String) -> Result<Vec<String>, ProfileError> {
    let mut store = ProfileStore::load_default()?;
    tokio::task::spawn_blocking(move || delete(&mut store, &KeychainStore, &name))
        .await
        .expect("deleting a profile does not panic")
}
