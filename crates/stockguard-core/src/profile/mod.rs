//! Connection profiles: which sale to connect to, and as whom.
//!
//! A profile names an environment kind, a MySQL URL (and optionally a read replica for heavy
//! queries), a Redis URL, the key prefix and the role the user acts in. Profiles live in a TOML
//! file in the user's config directory ([`store`]); passwords never do: they live in the OS
//! keychain ([`secrets`]). [`resolve`] turns a profile plus the environment variable
//! overrides into the settings a connection is made with (and, for a sale Stockguard did not
//! build, its adapter file and the state database); [`manage`] saves and deletes a
//! profile together with its keychain entries; [`tls`] holds the CA and client certificate
//! files of servers reached over TLS.

pub mod manage;
pub mod resolve;
pub mod role;
pub mod secrets;
pub mod ssh;
pub mod store;
pub mod thresholds;
pub mod tls;

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

pub use resolve::{
    resolve, resolve_for_process, resolve_for_process_servers, resolve_for_process_without_mysql, resolve_for_servers,
    resolve_without_mysql, ConnectionSettings, EnvOverrides, Notice, Servers,
};
pub use role::Role;
pub use secrets::{KeychainStore, SecretSlot, SecretStore};
pub use ssh::SshTunnel;
pub use store::ProfileStore;
pub use thresholds::Thresholds;
pub use tls::{CertFiles, MysqlTls, RedisTls, SslMode, Tls};

/// What kind of environment a profile points at. Production asks for typed confirmations
/// before destructive actions; the desktop banner is coloured by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum EnvironmentKind {
    Production,
    Staging,
    Sandbox,
}

impl EnvironmentKind {
    /// Every kind, in the order a chooser lists them.
    pub const ALL: [Self; 3] = [Self::Production, Self::Staging, Self::Sandbox];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Production => "production",
            Self::Staging => "staging",
            Self::Sandbox => "sandbox",
        }
    }
}

impl fmt::Display for EnvironmentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn is_default(t: &Thresholds) -> bool {
    *t == Thresholds::default()
}

fn default_prefix() -> String {
    crate::keys::DEFAULT_PREFIX.to_string()
}

/// One saved profile, as stored in `profiles.toml` (without its name, which is the table key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Profile {
    pub environment: EnvironmentKind,
    /// MySQL URL without a password, e.g. `mysql://app@db.internal:3306/sale`.
    pub mysql_url: String,
    /// Optional read replica for heavy reads (reconciliation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mysql_replica_url: Option<String>,
    /// Redis URL without a password.
    pub redis_url: String,
    #[serde(default = "default_prefix")]
    pub key_prefix: String,
    pub role: Role,
    /// A read-only profile refuses every write action.
    #[serde(default)]
    pub read_only: bool,
    /// When the backlog and the engines' breakers alert (the console's alerts and tray).
    #[serde(default, skip_serializing_if = "is_default")]
    pub thresholds: Thresholds,
    /// The adapter file of a sale Stockguard did not build (docs/adapters/), as an absolute
    /// path; `--adapter` and `STOCKGUARD_ADAPTER` take precedence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// Stockguard's own database for an adapter sale (baselines, audit, acknowledgements),
    /// without a password (the `state` slot); `--state-url` and `STOCKGUARD_STATE_URL` take
    /// precedence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_url: Option<String>,
    /// TLS to the servers: a pinned CA and client certificates ([`tls`]).
    #[serde(default, skip_serializing_if = "Tls::is_empty")]
    pub tls: Tls,
    /// The SSH bastion the servers are reached through ([`ssh`]). Not in the window's types
    /// yet: the window's form does not show it (saving from the form keeps it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub ssh_tunnel: Option<ssh::SshTunnel>,
    /// Which passwords of this profile are kept in the keychain.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub secrets: BTreeSet<SecretSlot>,
    /// Which passwords of this profile are read from their environment variable
    /// ([`SecretSlot::env_var`]) at each connection and never stored: on a machine without a
    /// keychain, or by choice (`profile add --password-from-env SLOT`).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub passwords_from_env: BTreeSet<SecretSlot>,
}

/// Errors of the profile layer. Every message is one line a person can act on.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("unknown profile `{name}` (known: {known}); create it with `stockguard profile add`")]
    UnknownProfile { name: String, known: String },
    #[error("no profile chosen: pass --profile NAME, set STOCKGUARD_PROFILE, or set STOCKGUARD_MYSQL_URL and STOCKGUARD_REDIS_URL (run `stockguard sandbox up` for a local one)")]
    NoProfile,
    /// Half of the environment's connection: one URL set, the other not.
    #[error("{set} is set but {missing} is not: set both to connect without a profile (or choose one with --profile NAME or STOCKGUARD_PROFILE)")]
    OneUrlOnly { set: &'static str, missing: &'static str },
    #[error("invalid profile name `{0}`: use letters, digits, `-` and `_` (at most 64)")]
    InvalidName(String),
    #[error("malformed {what} URL `{url}`: {reason}")]
    MalformedUrl { what: &'static str, url: String, reason: String },
    #[error("the {what} URL of a profile must not hold a password; store it in the keychain with `stockguard profile set-password`")]
    PasswordInUrl { what: &'static str },
    /// TLS files that cannot work together (or with the URL they go with).
    #[error("{0}")]
    Tls(String),
    #[error("{0}")]
    SslMode(#[from] tls::UnknownSslMode),
    #[error(transparent)]
    Bastion(#[from] crate::ssh_tunnel::MalformedBastion),
    #[error("an SSH bastion needs a private key file: --ssh-key FILE or STOCKGUARD_SSH_KEY")]
    SshKeyMissing,
    #[error("STOCKGUARD_SSH_KEY or STOCKGUARD_SSH_KNOWN_HOSTS is set but no SSH bastion is named: set STOCKGUARD_SSH_TUNNEL=ssh://user@host:port or the profile's --ssh-tunnel")]
    SshWithoutBastion,
    #[error("a Redis Cluster (several seed nodes) cannot be reached through an SSH bastion: its nodes announce their own addresses, which one forward does not reach")]
    ClusterThroughBastion,
    #[error("invalid key prefix `{0}`: use 1-32 letters, digits, `-` or `_`")]
    InvalidPrefix(String),
    #[error("invalid alert thresholds ({0:?}): the backlog must be 0 or more and the open breakers 1 or more")]
    InvalidThresholds(Thresholds),
    #[error("STOCKGUARD_ROLE: {0}")]
    UnknownRole(#[from] role::UnknownRole),
    #[error("cannot read profiles file {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("profiles file {path} is not valid: {reason}")]
    Parse { path: String, reason: String },
    #[error("cannot write profiles file {path}: {source}")]
    Write { path: String, source: std::io::Error },
    #[error("no config directory for this user; set STOCKGUARD_CONFIG_DIR")]
    NoConfigDir,
    #[error("the OS keychain is not available here ({reason}) and {env_var} is not set: set {env_var} to give the {slot} password for this run")]
    NoKeychain { reason: String, slot: SecretSlot, env_var: &'static str },
    #[error(
        "profile `{profile}` takes its {slot} password from {env_var}, which is not set: set {env_var} for this run"
    )]
    PasswordNotInEnvironment { profile: String, slot: SecretSlot, env_var: &'static str },
    #[error("the {slot} password of profile `{profile}` is not in the keychain; store it with `stockguard profile set-password --profile {profile} --slot {slot}`")]
    MissingSecret { profile: String, slot: SecretSlot },
    #[error("keychain error for the {slot} password: {reason}")]
    Keychain { slot: SecretSlot, reason: String },
}

/// Checks a profile name: it is used as a TOML key and in keychain entry names.
pub fn validate_name(name: &str) -> Result<(), ProfileError> {
    let ok =
        !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(ProfileError::InvalidName(name.to_string()))
    }
}

/// Checks a key prefix: it becomes part of every Redis key name.
pub fn validate_prefix(prefix: &str) -> Result<(), ProfileError> {
    let ok = !prefix.is_empty()
        && prefix.len() <= 32
        && prefix.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(ProfileError::InvalidPrefix(prefix.to_string()))
    }
}

/// Parses a URL of the given scheme family and refuses an embedded password.
pub fn validate_url(what: &'static str, url: &str, schemes: &[&str]) -> Result<url::Url, ProfileError> {
    let parsed = parse_url(what, url, schemes)?;
    if parsed.password().is_some() {
        return Err(ProfileError::PasswordInUrl { what });
    }
    Ok(parsed)
}

/// Parses a URL of the given scheme family (passwords allowed: used for overrides).
pub fn parse_url(what: &'static str, url: &str, schemes: &[&str]) -> Result<url::Url, ProfileError> {
    let malformed = |reason: String| ProfileError::MalformedUrl { what, url: redact(url), reason };
    let parsed = url::Url::parse(url).map_err(|e| malformed(e.to_string()))?;
    if !schemes.contains(&parsed.scheme()) {
        return Err(malformed(format!("scheme must be one of {}", schemes.join(", "))));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(malformed("no host".into()));
    }
    Ok(parsed)
}

pub const MYSQL_SCHEMES: &[&str] = &["mysql", "mariadb"];
pub const REDIS_SCHEMES: &[&str] = &["redis", "rediss"];

/// Parses a Redis URL: one server, or a comma-separated list of a cluster's seed nodes
/// ([`crate::redis_link`]), each a Redis URL of its own.
pub fn parse_redis_url(what: &'static str, url: &str) -> Result<Vec<url::Url>, ProfileError> {
    let seeds = crate::redis_link::seeds(url);
    if seeds.is_empty() {
        return Err(ProfileError::MalformedUrl { what, url: redact(url), reason: "no server named".into() });
    }
    seeds.into_iter().map(|seed| parse_url(what, seed, REDIS_SCHEMES)).collect()
}

/// [`parse_redis_url`], refusing a password in any seed (profiles keep them in the keychain).
pub fn validate_redis_url(what: &'static str, url: &str) -> Result<Vec<url::Url>, ProfileError> {
    let seeds = parse_redis_url(what, url)?;
    if seeds.iter().any(|u| u.password().is_some()) {
        return Err(ProfileError::PasswordInUrl { what });
    }
    Ok(seeds)
}

/// A URL with any password replaced by `***`, safe for messages and logs.
pub fn redact(url: &str) -> String {
    // A cluster's seed list: each seed on its own.
    if url.contains(',') {
        return crate::redis_link::seeds(url).into_iter().map(redact).collect::<Vec<_>>().join(",");
    }
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        Ok(u) => u.to_string(),
        // Unparseable: keep only what follows the last `@`, where a password cannot be.
        Err(_) => match url.rsplit_once('@') {
            Some((_, tail)) => format!("…@{tail}"),
            None => url.to_string(),
        },
    }
}

impl Profile {
    /// The password slots this profile has a server for: MySQL and Redis always, the replica
    /// and the state database when it names them.
    pub fn slots(&self) -> Vec<SecretSlot> {
        SecretSlot::ALL
            .into_iter()
            .filter(|slot| match slot {
                SecretSlot::Mysql | SecretSlot::Redis => true,
                SecretSlot::MysqlReplica => self.mysql_replica_url.is_some(),
                SecretSlot::State => self.state_url.is_some(),
            })
            .collect()
    }

    /// Checks every field; called before a profile is saved.
    pub fn validate(&self) -> Result<(), ProfileError> {
        validate_url("MySQL", &self.mysql_url, MYSQL_SCHEMES)?;
        if let Some(replica) = &self.mysql_replica_url {
            validate_url("MySQL replica", replica, MYSQL_SCHEMES)?;
        }
        validate_redis_url("Redis", &self.redis_url)?;
        if let Some(state) = &self.state_url {
            validate_url("state database", state, MYSQL_SCHEMES)?;
        }
        validate_prefix(&self.key_prefix)?;
        self.tls.validate(&self.redis_url)?;
        if let Some(tunnel) = &self.ssh_tunnel {
            tunnel.validate()?;
            if crate::redis_link::seeds(&self.redis_url).len() > 1 {
                return Err(ProfileError::ClusterThroughBastion);
            }
        }
        // A threshold of 0 breakers would alert on a healthy sale.
        if self.thresholds.backlog_messages < 0 || self.thresholds.breakers_open == 0 {
            return Err(ProfileError::InvalidThresholds(self.thresholds));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_that_would_alert_on_a_healthy_sale_is_refused() {
        let mut p: Profile = toml::from_str(
            "environment = \"staging\"\nmysql_url = \"mysql://app@db/sale\"\nredis_url = \"redis://cache\"\nrole = \"oncall\"",
        )
        .expect("a profile without thresholds parses");
        assert_eq!(p.thresholds, Thresholds::default(), "profiles written before thresholds get the defaults");
        p.validate().expect("the defaults are valid");
        p.thresholds.breakers_open = 0;
        assert!(matches!(p.validate(), Err(ProfileError::InvalidThresholds(_))));
    }

    #[test]
    fn a_profile_with_a_bastion_keeps_it_and_refuses_a_cluster_behind_it() {
        let mut p: Profile = toml::from_str(
            "environment = \"production\"\nmysql_url = \"mysql://app@db/sale\"\nredis_url = \"redis://cache\"\n\
             role = \"oncall\"\n[ssh_tunnel]\nurl = \"ssh://ops@jump:22\"\nkey = \"/keys/ops\"",
        )
        .expect("a profile with a bastion parses");
        p.validate().expect("a bastion with a key is valid");
        let saved = toml::to_string(&p).unwrap();
        assert!(saved.contains("[ssh_tunnel]") && !saved.contains("known_hosts"), "{saved}");
        p.redis_url = "redis://a:7000,redis://b:7001".into();
        assert!(matches!(p.validate(), Err(ProfileError::ClusterThroughBastion)));
    }

    #[test]
    fn a_profile_url_with_a_password_is_refused() {
        let err = validate_url("MySQL", "mysql://root:hunter2@db:3306/sale", MYSQL_SCHEMES).unwrap_err();
        assert!(matches!(err, ProfileError::PasswordInUrl { .. }));
        assert!(!err.to_string().contains("hunter2"));
    }

    #[test]
    fn a_malformed_url_is_reported_without_its_password() {
        let err = parse_url("Redis", "http://u:secret@host:1", REDIS_SCHEMES).unwrap_err();
        assert!(matches!(err, ProfileError::MalformedUrl { .. }));
        assert!(!err.to_string().contains("secret"), "{err}");
    }

    #[test]
    fn a_cluster_url_is_a_list_of_seeds_each_checked_and_redacted() {
        let seeds = parse_redis_url("Redis", "redis://127.0.0.1:7000,redis://127.0.0.1:7001").unwrap();
        assert_eq!(seeds.len(), 2);
        assert!(parse_redis_url("Redis", "redis://a:1,http://b:2").is_err());
        let err = validate_redis_url("Redis", "redis://a:1,redis://u:pw@b:2").unwrap_err();
        assert!(matches!(err, ProfileError::PasswordInUrl { .. }));
        assert_eq!(redact("redis://u:pw@a:1,redis://u:pw@b:2"), "redis://u:***@a:1,redis://u:***@b:2");
    }

    #[test]
    fn redact_hides_the_password() {
        assert_eq!(redact("mysql://root:pw@h:3306/db"), "mysql://root:***@h:3306/db");
    }

    #[test]
    fn profile_names_are_restricted_to_safe_characters() {
        assert!(validate_name("prod-eu_1").is_ok());
        assert!(validate_name("a b").is_err());
        assert!(validate_name("").is_err());
    }
}
