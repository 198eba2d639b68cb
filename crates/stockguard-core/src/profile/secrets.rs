//! Passwords of profiles, kept in the OS keychain.
//!
//! `keyring` is built with its platform stores (macOS Keychain, Windows Credential Manager,
//! the Secret Service on Linux); without them it would silently keep secrets in memory only.
//! Where no keychain is reachable (a headless CI box has no Secret Service), a profile records
//! which passwords come from their environment variables instead (`passwords_from_env`, see
//! [`super::manage::save`]); there is no plaintext or in-memory fallback.

use std::fmt;

use secrecy::SecretString;
use serde::{Deserialize, Serialize};

/// Which password of a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum SecretSlot {
    Mysql,
    MysqlReplica,
    Redis,
    /// The state database of an adapter sale (Stockguard's own, never the sale's).
    State,
}

impl SecretSlot {
    /// Every slot, in the order a chooser lists them.
    pub const ALL: [Self; 4] = [Self::Mysql, Self::MysqlReplica, Self::Redis, Self::State];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mysql => "mysql",
            Self::MysqlReplica => "mysql_replica",
            Self::Redis => "redis",
            Self::State => "state",
        }
    }

    /// The environment variable that gives this password where no keychain is available.
    pub fn env_var(self) -> &'static str {
        match self {
            Self::Mysql => "STOCKGUARD_MYSQL_PASSWORD",
            Self::MysqlReplica => "STOCKGUARD_MYSQL_REPLICA_PASSWORD",
            Self::Redis => "STOCKGUARD_REDIS_PASSWORD",
            Self::State => "STOCKGUARD_STATE_PASSWORD",
        }
    }
}

impl fmt::Display for SecretSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a secret store can answer.
#[derive(Debug)]
pub enum SecretLookup {
    Found(SecretString),
    Missing,
    /// No keychain can be reached on this machine; the reason says why.
    Unavailable(String),
}

/// A place passwords are kept. The only implementation used by the product is
/// [`KeychainStore`].
pub trait SecretStore: Send + Sync {
    fn get(&self, profile: &str, slot: SecretSlot) -> SecretLookup;
    fn set(&self, profile: &str, slot: SecretSlot, secret: &SecretString) -> Result<(), SecretLookup>;
    fn delete(&self, profile: &str, slot: SecretSlot) -> Result<(), SecretLookup>;

    /// Whether this machine has a keychain: `Err(reason)` when none can be reached (a Linux
    /// box without a Secret Service, a jump host, CI). Asks for an entry no profile has.
    fn reachable(&self) -> Result<(), String> {
        match self.get("", SecretSlot::Mysql) {
            SecretLookup::Unavailable(reason) => Err(reason),
            SecretLookup::Found(_) | SecretLookup::Missing => Ok(()),
        }
    }
}

/// The OS keychain, through `keyring`. Blocking: call it off the async runtime
/// (`spawn_blocking`), as the Secret Service client runs its own executor.
#[derive(Debug, Default, Clone, Copy)]
pub struct KeychainStore;

const SERVICE: &str = "stockguard";

fn entry(profile: &str, slot: SecretSlot) -> Result<keyring::Entry, keyring::Error> {
    keyring::Entry::new(SERVICE, &format!("{profile}:{slot}"))
}

fn classify(err: keyring::Error) -> SecretLookup {
    match err {
        keyring::Error::NoEntry => SecretLookup::Missing,
        keyring::Error::NoStorageAccess(e) => SecretLookup::Unavailable(e.to_string()),
        keyring::Error::PlatformFailure(e) => SecretLookup::Unavailable(e.to_string()),
        other => SecretLookup::Unavailable(other.to_string()),
    }
}

impl SecretStore for KeychainStore {
    fn get(&self, profile: &str, slot: SecretSlot) -> SecretLookup {
        match entry(profile, slot).and_then(|e| e.get_password()) {
            Ok(pw) => SecretLookup::Found(SecretString::from(pw)),
            Err(e) => classify(e),
        }
    }

    fn set(&self, profile: &str, slot: SecretSlot, secret: &SecretString) -> Result<(), SecretLookup> {
        use secrecy::ExposeSecret as _;
        entry(profile, slot).and_then(|e| e.set_password(secret.expose_secret())).map_err(classify)
    }

    fn delete(&self, profile: &str, slot: SecretSlot) -> Result<(), SecretLookup> {
        match entry(profile, slot).and_then(|e| e.delete_credential()) {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(classify(e)),
        }
    }
}
