//! Saving and deleting profiles together with their passwords, as the desktop Connections
//! screen and `profile add` do: the profile goes to the profiles file, each password given
//! goes to the keychain (or, on a machine without one, the profile records that its
//! environment variable gives it), and nothing that was stored there is ever read back for
//! display.

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

/// Where a saved profile's passwords come from, as a save leaves them: what the CLI and the
/// window say after a save.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SavedPasswords {
    /// Why no keychain could be used here (`None`: there is one).
    pub no_keychain: Option<String>,
    /// The slots read from their environment variable at each connection, with the variable.
    pub from_env: Vec<EnvPassword>,
}

/// A password slot read from the environment, and the variable that gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EnvPassword {
    pub slot: SecretSlot,
    pub env_var: String,
}

/// Saves `profile` under `name`. Passwords given (non-empty) are stored in the keychain and
/// their slots remembered; slots stored before are kept unless their URL is gone (a removed
/// replica drops its password too). Validation happens before anything is written.
///
/// The slots in `profile.passwords_from_env` (asked for: `--password-from-env`) are read from
/// their environment variables, never stored. On a machine without a keychain the profile is
/// saved all the same: a password given is not stored and its slot is read from the
/// environment, as is every slot of the profile whose variable `env_has` says is set now.
pub fn save(
    store: &mut ProfileStore,
    secrets: &dyn SecretStore,
    name: &str,
    profile: Profile,
    passwords: &[(SecretSlot, SecretString)],
) -> Result<SavedPasswords, ProfileError> {
    save_with_env(store, secrets, name, profile, passwords, &|slot| {
        std::env::var_os(slot.env_var()).is_some_and(|v| !v.is_empty())
    })
}

/// [`save`], with which variables are set given by `env_has` (a test's own environment).
pub fn save_with_env(
    store: &mut ProfileStore,
    secrets: &dyn SecretStore,
    name: &str,
    mut profile: Profile,
    passwords: &[(SecretSlot, SecretString)],
    env_has: &dyn Fn(SecretSlot) -> bool,
) -> Result<SavedPasswords, ProfileError> {
    validate_name(name)?;
    profile.validate()?;
    let has = profile.slots();
    let previous = store.get(name).ok();
    let mut slots = previous.map(|p| p.secrets.clone()).unwrap_or_default();
    let mut from_env = previous.map(|p| p.passwords_from_env.clone()).unwrap_or_default();
    from_env.extend(profile.passwords_from_env.iter().copied());
    if profile.mysql_replica_url.is_none() && slots.remove(&SecretSlot::MysqlReplica) {
        let _ = secrets.delete(name, SecretSlot::MysqlReplica);
    }
    // A password now asked of the environment leaves the keychain.
    for slot in &profile.passwords_from_env {
        if slots.remove(slot) {
            let _ = secrets.delete(name, *slot);
        }
    }
    let mut no_keychain = None;
    let typed: Vec<_> = passwords
        .iter()
        .filter(|(slot, p)| {
            !p.expose_secret().is_empty() && has.contains(slot) && !profile.passwords_from_env.contains(slot)
        })
        .collect();
    for (slot, password) in typed {
        match secrets.set(name, *slot, password) {
            Ok(()) => {
                slots.insert(*slot);
                from_env.remove(slot);
            }
            // No keychain here: the password is not kept anywhere; its variable gives it.
            Err(SecretLookup::Unavailable(reason)) => {
                no_keychain = Some(reason);
                from_env.insert(*slot);
            }
            Err(SecretLookup::Missing | SecretLookup::Found(_)) => {
                return Err(ProfileError::Keychain { slot: *slot, reason: "the keychain refused the password".into() })
            }
        }
    }
    if no_keychain.is_none() {
        no_keychain = secrets.reachable().err();
    }
    if no_keychain.is_some() {
        // Nothing can be in a keychain that is not there: the environment gives what is set.
        from_env.extend(has.iter().copied().filter(|slot| env_has(*slot) && !slots.contains(slot)));
    }
    from_env.retain(|slot| has.contains(slot));
    profile.secrets = slots;
    profile.passwords_from_env = from_env.clone();
    store.upsert(name, profile)?;
    store.save()?;
    let from_env = from_env.into_iter().map(|slot| EnvPassword { slot, env_var: slot.env_var().to_string() }).collect();
    Ok(SavedPasswords { no_keychain, from_env })
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
) -> Result<SavedPasswords, ProfileError> {
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
