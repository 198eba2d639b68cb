//! Keychains for tests: one kept in memory, so a test sees what was stored where, and one that
//! is not there, as on a headless machine. The product only ever uses the OS keychain.

use std::collections::BTreeMap;
use std::sync::Mutex;

use secrecy::{ExposeSecret as _, SecretString};
use stockguard_core::profile::secrets::SecretLookup;
use stockguard_core::profile::{SecretSlot, SecretStore};

/// A keychain kept in memory: `(profile, slot) -> password`.
#[derive(Default)]
pub struct Recorded(pub Mutex<BTreeMap<(String, SecretSlot), String>>);

impl SecretStore for Recorded {
    fn get(&self, profile: &str, slot: SecretSlot) -> SecretLookup {
        match self.0.lock().unwrap().get(&(profile.to_string(), slot)) {
            Some(pw) => SecretLookup::Found(SecretString::from(pw.clone())),
            None => SecretLookup::Missing,
        }
    }
    fn set(&self, profile: &str, slot: SecretSlot, secret: &SecretString) -> Result<(), SecretLookup> {
        self.0.lock().unwrap().insert((profile.to_string(), slot), secret.expose_secret().to_string());
        Ok(())
    }
    fn delete(&self, profile: &str, slot: SecretSlot) -> Result<(), SecretLookup> {
        self.0.lock().unwrap().remove(&(profile.to_string(), slot));
        Ok(())
    }
}

/// No keychain reachable (a headless machine without a Secret Service).
pub struct NoKeychain;

impl SecretStore for NoKeychain {
    fn get(&self, _: &str, _: SecretSlot) -> SecretLookup {
        SecretLookup::Unavailable("no Secret Service".into())
    }
    fn set(&self, _: &str, _: SecretSlot, _: &SecretString) -> Result<(), SecretLookup> {
        Err(SecretLookup::Unavailable("no Secret Service".into()))
    }
    fn delete(&self, _: &str, _: SecretSlot) -> Result<(), SecretLookup> {
        Err(SecretLookup::Unavailable("no Secret Service".into()))
    }
}
