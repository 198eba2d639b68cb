//! A profile's SSH bastion: the sale's MySQL and Redis reached through a jump host.
//!
//! | profile field             | `profile add` flag  | variable                          |
//! |---------------------------|---------------------|-----------------------------------|
//! | `ssh_tunnel.url`          | `--ssh-tunnel`      | `STOCKGUARD_SSH_TUNNEL`           |
//! | `ssh_tunnel.key`          | `--ssh-key`         | `STOCKGUARD_SSH_KEY`              |
//! | `ssh_tunnel.known_hosts`  | `--ssh-known-hosts` | `STOCKGUARD_SSH_KNOWN_HOSTS`      |
//! | (never stored)            |                     | `STOCKGUARD_SSH_KEY_PASSPHRASE`   |
//!
//! The known_hosts file is `~/.ssh/known_hosts` when none is named. The tunnel itself is
//! [`crate::ssh_tunnel`]; connection opening ([`crate::connect`]) goes through it.

use std::path::PathBuf;

use secrecy::SecretString;
use serde::{Deserialize, Serialize};

use super::ProfileError;
use crate::ssh_tunnel::{BastionAddress, BastionConfig};

/// The bastion as a profile keeps it (paths absolute, no passphrase).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SshTunnel {
    /// `ssh://user@host:port`.
    pub url: String,
    /// The OpenSSH private key file.
    pub key: String,
    /// The known_hosts file with the bastion's host key; `~/.ssh/known_hosts` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_hosts: Option<String>,
}

/// What the environment says of the bastion (`STOCKGUARD_SSH_*`).
#[derive(Debug, Clone, Default)]
pub struct EnvSsh {
    pub tunnel: Option<String>,
    pub key: Option<String>,
    pub known_hosts: Option<String>,
    pub passphrase: Option<SecretString>,
}

impl EnvSsh {
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Self {
        Self {
            tunnel: var("STOCKGUARD_SSH_TUNNEL"),
            key: var("STOCKGUARD_SSH_KEY"),
            known_hosts: var("STOCKGUARD_SSH_KNOWN_HOSTS"),
            passphrase: var("STOCKGUARD_SSH_KEY_PASSPHRASE").map(SecretString::from),
        }
    }
}

impl SshTunnel {
    /// Checks the URL and that a key is named.
    pub fn validate(&self) -> Result<(), ProfileError> {
        self.url.parse::<BastionAddress>()?;
        if self.key.trim().is_empty() {
            return Err(ProfileError::SshKeyMissing);
        }
        Ok(())
    }

    /// The profile's bastion with the environment's fields over it; `None` when neither names one.
    pub fn overlay(profile: Option<&Self>, env: &EnvSsh) -> Result<Option<BastionConfig>, ProfileError> {
        let url = env.tunnel.clone().or_else(|| profile.map(|p| p.url.clone()));
        let Some(url) = url else {
            return match (&env.key, &env.known_hosts) {
                (None, None) => Ok(None),
                _ => Err(ProfileError::SshWithoutBastion),
            };
        };
        let key = env.key.clone().or_else(|| profile.map(|p| p.key.clone())).ok_or(ProfileError::SshKeyMissing)?;
        let tunnel = Self {
            url,
            key,
            known_hosts: env.known_hosts.clone().or_else(|| profile.and_then(|p| p.known_hosts.clone())),
        };
        tunnel.validate()?;
        Ok(Some(BastionConfig {
            address: tunnel.url.parse()?,
            key: PathBuf::from(tunnel.key),
            passphrase: env.passphrase.clone(),
            known_hosts: tunnel.known_hosts.map(PathBuf::from).unwrap_or_else(default_known_hosts),
        }))
    }
}

/// `~/.ssh/known_hosts`, as `ssh` reads it.
pub fn default_known_hosts() -> PathBuf {
    dirs::home_dir().unwrap_or_default().join(".ssh").join("known_hosts")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved() -> SshTunnel {
        SshTunnel { url: "ssh://ops@jump:2222".into(), key: "/keys/ops".into(), known_hosts: None }
    }

    #[test]
    fn the_environment_names_a_bastion_over_the_profiles() {
        let env = EnvSsh { tunnel: Some("ssh://ci@other:22".into()), ..Default::default() };
        let config = SshTunnel::overlay(Some(&saved()), &env).unwrap().unwrap();
        assert_eq!(config.address.to_string(), "ssh://ci@other:22");
        assert_eq!(config.key, PathBuf::from("/keys/ops"));
        assert_eq!(config.known_hosts, default_known_hosts());
    }

    #[test]
    fn a_key_without_a_bastion_or_a_bastion_without_a_key_is_refused() {
        let key_only = EnvSsh { key: Some("/k".into()), ..Default::default() };
        assert!(matches!(SshTunnel::overlay(None, &key_only), Err(ProfileError::SshWithoutBastion)));
        let bastion_only = EnvSsh { tunnel: Some("ssh://ci@other".into()), ..Default::default() };
        assert!(matches!(SshTunnel::overlay(None, &bastion_only), Err(ProfileError::SshKeyMissing)));
        assert!(SshTunnel::overlay(None, &EnvSsh::default()).unwrap().is_none());
    }
}
