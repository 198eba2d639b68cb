//! From a profile name (or none) and the environment to the settings a connection uses.
//!
//! Precedence: `STOCKGUARD_MYSQL_URL`, `STOCKGUARD_REDIS_URL` and `STOCKGUARD_KEY_PREFIX`
//! override the profile's fields (for CI, scripts and headless use). A profile whose
//! connection (a URL) is overridden keeps no label of its own: it is labelled by
//! `STOCKGUARD_ENVIRONMENT`, else production. With no profile at all,
//! both URLs must come from the environment, and the environment kind comes from
//! `STOCKGUARD_ENVIRONMENT`, defaulting to `production` so that an unlabelled connection gets
//! the most careful treatment, never the least. The TLS files ([`super::tls`]) follow the
//! same rule, each field on its own: `STOCKGUARD_REDIS_CA` and its kin over the profile's.

use secrecy::{ExposeSecret as _, SecretString};
use serde::Serialize;

use super::role::Role;
use super::secrets::{SecretLookup, SecretSlot, SecretStore};
use super::tls::{Tls, UnknownSslMode};
use super::{
    parse_redis_url, parse_url, redact, validate_prefix, EnvironmentKind, ProfileError, ProfileStore, MYSQL_SCHEMES,
    REDIS_SCHEMES,
};
use crate::action::{Action, Refused};

/// The environment variables that override a profile.
#[derive(Debug, Clone, Default)]
pub struct EnvOverrides {
    pub profile: Option<String>,
    pub mysql_url: Option<String>,
    pub mysql_replica_url: Option<String>,
    pub redis_url: Option<String>,
    pub key_prefix: Option<String>,
    pub environment: Option<String>,
    pub actor: Option<String>,
    /// `STOCKGUARD_ROLE`: the role of a connection made from URLs alone (on-call when unset).
    pub role: Option<String>,
    /// Passwords given in the environment, for machines without a keychain.
    pub passwords: Vec<(SecretSlot, SecretString)>,
    /// `STOCKGUARD_REDIS_CA`, `STOCKGUARD_MYSQL_SSL_MODE` and their kin.
    pub tls: EnvTls,
    /// `STOCKGUARD_SSH_TUNNEL` and its kin.
    pub ssh: super::ssh::EnvSsh,
}

/// The TLS fields the environment gives, or the `ssl-mode` it named wrongly (refused when a
/// connection is resolved, not when the variables are read).
#[derive(Debug, Clone)]
pub struct EnvTls(pub Result<Tls, UnknownSslMode>);

impl Default for EnvTls {
    fn default() -> Self {
        Self(Ok(Tls::default()))
    }
}

impl From<Tls> for EnvTls {
    fn from(tls: Tls) -> Self {
        Self(Ok(tls))
    }
}

impl EnvOverrides {
    /// Reads the `STOCKGUARD_*` variables of this process.
    pub fn from_process_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let passwords = SecretSlot::ALL
            .into_iter()
            .filter_map(|slot| var(slot.env_var()).map(|v| (slot, SecretString::from(v))))
            .collect();
        Self {
            profile: var("STOCKGUARD_PROFILE"),
            mysql_url: var("STOCKGUARD_MYSQL_URL"),
            mysql_replica_url: var("STOCKGUARD_MYSQL_REPLICA_URL"),
            redis_url: var("STOCKGUARD_REDIS_URL"),
            key_prefix: var("STOCKGUARD_KEY_PREFIX"),
            environment: var("STOCKGUARD_ENVIRONMENT"),
            actor: var("STOCKGUARD_ACTOR").or_else(|| var("USER")),
            role: var("STOCKGUARD_ROLE"),
            passwords,
            tls: EnvTls(Tls::from_env(var).map_err(|e| match e {
                ProfileError::SslMode(bad) => bad,
                other => UnknownSslMode(other.to_string()),
            })),
            ssh: super::ssh::EnvSsh::from_env(var),
        }
    }

    fn password(&self, slot: SecretSlot) -> Option<&SecretString> {
        self.passwords.iter().find(|(s, _)| *s == slot).map(|(_, p)| p)
    }
}

/// Everything needed to connect, with passwords filled in. Never serialised, never logged:
/// use [`mysql_display`](Self::mysql_display) and friends for messages.
#[derive(Debug, Clone)]
pub struct ConnectionSettings {
    pub profile_name: Option<String>,
    pub environment: EnvironmentKind,
    pub role: Role,
    pub read_only: bool,
    /// The profile's alert thresholds (the defaults without a profile).
    pub thresholds: super::thresholds::Thresholds,
    /// Who acts; recorded in audit rows.
    pub actor: String,
    pub mysql_url: SecretString,
    pub mysql_replica_url: Option<SecretString>,
    pub redis_url: SecretString,
    pub key_prefix: String,
    /// The profile's adapter file (a sale Stockguard did not build); the CLI's `--adapter`
    /// and `STOCKGUARD_ADAPTER` take precedence.
    pub adapter: Option<std::path::PathBuf>,
    /// The profile's state database for an adapter sale, its password filled in;
    /// `--state-url` and `STOCKGUARD_STATE_URL` take precedence.
    pub state_url: Option<SecretString>,
    /// TLS to the servers: the profile's files with the environment's over them.
    pub tls: Tls,
    /// The SSH bastion the servers are reached through: the profile's, with the
    /// environment's fields over it ([`crate::ssh_tunnel`]).
    pub ssh_tunnel: Option<crate::ssh_tunnel::BastionConfig>,
    /// Things the user should be told (e.g. "no keychain here, password taken from ...").
    pub notices: Vec<Notice>,
}

/// Something the user should be told about the connection just resolved. Typed, not text, so
/// each front end says it in its own words: the CLI prints the English `Display`, the desktop
/// window renders the code and fields in its language (`notice_<code>` in ui/i18n.js).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum Notice {
    /// Nothing was chosen, so the local `sandbox` profile was taken.
    SandboxByDefault,
    /// `STOCKGUARD_*_URL` overrides replace the profile's servers, so the label is production.
    OverriddenIsProduction { overrides: Vec<String>, profile: String, label: EnvironmentKind },
    /// No OS keychain: a password came from its environment variable.
    PasswordFromEnvironment { reason: String, slot: SecretSlot, env_var: String },
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::SandboxByDefault => f.write_str("no --profile given; using the `sandbox` profile"),
            Self::OverriddenIsProduction { overrides, profile, label } => {
                let verb = if overrides.len() == 1 { "overrides" } else { "override" };
                write!(
                    f,
                    "{} {verb} profile `{profile}`'s connection, so it is treated as production, not {label}; set \
                     STOCKGUARD_ENVIRONMENT to label it",
                    overrides.join(" and "),
                )
            }
            Self::PasswordFromEnvironment { reason, slot, env_var } => {
                write!(f, "no OS keychain is available here ({reason}); the {slot} password was taken from {env_var}")
            }
        }
    }
}

impl ConnectionSettings {
    /// The one rule for every action on a sale ([`crate::action`]): this profile's role and
    /// read-only mark against what the action writes.
    pub fn may(&self, action: Action) -> Result<(), Refused> {
        crate::action::may(self.role, self.read_only, action)
    }

    /// False for the settings of a sale read without a database
    /// ([`resolve_without_mysql`] with only a Redis URL given).
    pub fn has_mysql(&self) -> bool {
        !self.mysql_url.expose_secret().is_empty()
    }

    /// Whether a Redis URL was given (a sale over an adapter that keeps no Redis has none).
    pub fn has_redis(&self) -> bool {
        !self.redis_url.expose_secret().is_empty()
    }

    pub fn mysql_display(&self) -> String {
        redact(self.mysql_url.expose_secret())
    }

    pub fn redis_display(&self) -> String {
        redact(self.redis_url.expose_secret())
    }

    /// Settings straight from URLs, for tests and the sandbox (no profile, no keychain), as
    /// the servers' root or admin account: the admin role.
    pub fn from_urls(environment: EnvironmentKind, mysql_url: &str, redis_url: &str, key_prefix: &str) -> Self {
        Self {
            profile_name: None,
            environment,
            role: Role::Admin,
            read_only: false,
            thresholds: Default::default(),
            actor: "test".into(),
            mysql_url: SecretString::from(mysql_url.to_string()),
            mysql_replica_url: None,
            redis_url: SecretString::from(redis_url.to_string()),
            key_prefix: key_prefix.to_string(),
            adapter: None,
            state_url: None,
            tls: Tls::default(),
            ssh_tunnel: None,
            notices: Vec::new(),
        }
    }

    /// These settings, reaching their servers with `tls`.
    pub fn with_tls(self, tls: Tls) -> Self {
        Self { tls, ..self }
    }
}

/// The profile [`resolve`] takes, by name, without its passwords: `--profile`, else
/// `STOCKGUARD_PROFILE`, else the local `sandbox` profile when no URL is given and one exists.
pub fn chosen<'a>(
    store: &'a ProfileStore,
    profile_flag: Option<&str>,
    env: &EnvOverrides,
) -> Result<Option<(String, &'a super::Profile)>, ProfileError> {
    let name = profile_flag.map(str::to_string).or_else(|| env.profile.clone());
    let name = match name {
        Some(name) => name,
        None if env.mysql_url.is_none() && env.redis_url.is_none() && store.get("sandbox").is_ok() => {
            "sandbox".to_string()
        }
        None => return Ok(None),
    };
    let profile = store.get(&name)?;
    Ok(Some((name, profile)))
}

/// Resolves the settings for `--profile NAME` (or `STOCKGUARD_PROFILE`), applying overrides.
pub fn resolve(
    store: &ProfileStore,
    profile_flag: Option<&str>,
    env: &EnvOverrides,
    secrets: &dyn SecretStore,
) -> Result<ConnectionSettings, ProfileError> {
    resolve_for_servers(store, profile_flag, env, secrets, Servers::Both)
}

/// Which of a sale's two servers a command connects to: a sale read over an adapter may keep
/// no database (Redis counters only) or no Redis (the database alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Servers {
    Both,
    RedisOnly,
    MysqlOnly,
}

/// As [`resolve`], for a sale with no database to read (an adapter file that names only
/// Redis): with no profile chosen, `STOCKGUARD_REDIS_URL` alone will do, and the MySQL URL is
/// then empty ([`ConnectionSettings::has_mysql`] is false; nothing may connect to it).
pub fn resolve_without_mysql(
    store: &ProfileStore,
    profile_flag: Option<&str>,
    env: &EnvOverrides,
    secrets: &dyn SecretStore,
) -> Result<ConnectionSettings, ProfileError> {
    resolve_for_servers(store, profile_flag, env, secrets, Servers::RedisOnly)
}

/// As [`resolve`], for a sale that uses `servers` only: with no profile chosen, the URL of
/// each server it uses will do, and the other is then empty (nothing may connect to it).
pub fn resolve_for_servers(
    store: &ProfileStore,
    profile_flag: Option<&str>,
    env: &EnvOverrides,
    secrets: &dyn SecretStore,
    servers: Servers,
) -> Result<ConnectionSettings, ProfileError> {
    let mut notices = Vec::new();
    // Nothing chosen and no URLs given: the local sandbox, if one was set up, is the one
    // profile that is safe to pick without being asked ([`chosen`]).
    let chosen = chosen(store, profile_flag, env)?;
    if chosen.is_some() && profile_flag.is_none() && env.profile.is_none() {
        notices.push(Notice::SandboxByDefault);
    }
    let actor = env.actor.clone().unwrap_or_else(|| "unknown".to_string());

    let mut settings = match chosen {
        Some((name, profile)) => {
            let profile = profile.clone();
            // A Redis URL may list a cluster's seed nodes: each gets the password.
            let mut with_secret = |url: &str, what: &'static str, schemes: &[&str], slot: SecretSlot| {
                let mut seeds = if schemes == REDIS_SCHEMES {
                    parse_redis_url(what, url)?
                } else {
                    vec![parse_url(what, url, schemes)?]
                };
                // A password named as the environment's is its variable, or a clear error;
                // one in the keychain is looked up there.
                let pw = if profile.passwords_from_env.contains(&slot) {
                    let from_env = env.password(slot).cloned();
                    Some(from_env.ok_or_else(|| ProfileError::PasswordNotInEnvironment {
                        profile: name.clone(),
                        slot,
                        env_var: slot.env_var(),
                    })?)
                } else if profile.secrets.contains(&slot) {
                    Some(fetch_secret(&name, slot, env, secrets, &mut notices)?)
                } else {
                    None
                };
                if let Some(pw) = pw {
                    for parsed in &mut seeds {
                        parsed.set_password(Some(pw.expose_secret())).map_err(|()| ProfileError::MalformedUrl {
                            what,
                            url: redact(url),
                            reason: "cannot hold a password".into(),
                        })?;
                    }
                }
                let text = seeds.iter().map(url::Url::to_string).collect::<Vec<_>>().join(",");
                Ok::<_, ProfileError>(SecretString::from(text))
            };
            // An overridden URL is taken whole, so its profile password is not looked up.
            let mysql_url = match &env.mysql_url {
                Some(url) => SecretString::from(url.clone()),
                None => with_secret(&profile.mysql_url, "MySQL", MYSQL_SCHEMES, SecretSlot::Mysql)?,
            };
            let redis_url = match &env.redis_url {
                Some(url) => SecretString::from(url.clone()),
                None => with_secret(&profile.redis_url, "Redis", REDIS_SCHEMES, SecretSlot::Redis)?,
            };
            let mysql_replica_url = match (&env.mysql_replica_url, &profile.mysql_replica_url) {
                (Some(url), _) => Some(SecretString::from(url.clone())),
                (None, Some(url)) => Some(with_secret(url, "MySQL replica", MYSQL_SCHEMES, SecretSlot::MysqlReplica)?),
                (None, None) => None,
            };
            let state_url = match &profile.state_url {
                Some(url) => Some(with_secret(url, "state database", MYSQL_SCHEMES, SecretSlot::State)?),
                None => None,
            };
            let environment = overridden_label(&name, profile.environment, env, &mut notices)?;
            ConnectionSettings {
                profile_name: Some(name),
                environment,
                role: profile.role,
                read_only: profile.read_only,
                thresholds: profile.thresholds,
                actor,
                mysql_url,
                mysql_replica_url,
                redis_url,
                key_prefix: profile.key_prefix,
                adapter: profile.adapter.map(std::path::PathBuf::from),
                state_url,
                tls: profile.tls,
                ssh_tunnel: super::ssh::SshTunnel::overlay(profile.ssh_tunnel.as_ref(), &env.ssh)?,
                notices: Vec::new(),
            }
        }
        None => {
            let none = String::new();
            let (mysql, redis) = match (&env.mysql_url, &env.redis_url) {
                (Some(mysql), Some(redis)) => (mysql, redis),
                (None, Some(redis)) if servers == Servers::RedisOnly => (&none, redis),
                (Some(mysql), None) if servers == Servers::MysqlOnly => (mysql, &none),
                (Some(_), None) => {
                    return Err(ProfileError::OneUrlOnly {
                        set: "STOCKGUARD_MYSQL_URL",
                        missing: "STOCKGUARD_REDIS_URL",
                    })
                }
                (None, Some(_)) => {
                    return Err(ProfileError::OneUrlOnly {
                        set: "STOCKGUARD_REDIS_URL",
                        missing: "STOCKGUARD_MYSQL_URL",
                    })
                }
                (None, None) => return Err(ProfileError::NoProfile),
            };
            let environment = match env.environment.as_deref() {
                None => EnvironmentKind::Production,
                Some(kind) => parse_environment(kind)?,
            };
            let role = match env.role.as_deref() {
                None => Role::Oncall,
                Some(name) => name.parse().map_err(ProfileError::UnknownRole)?,
            };
            ConnectionSettings {
                profile_name: None,
                environment,
                role,
                read_only: false,
                thresholds: Default::default(),
                actor,
                mysql_url: SecretString::from(mysql.clone()),
                mysql_replica_url: None,
                redis_url: SecretString::from(redis.clone()),
                key_prefix: crate::keys::DEFAULT_PREFIX.to_string(),
                adapter: None,
                state_url: None,
                tls: Tls::default(),
                ssh_tunnel: super::ssh::SshTunnel::overlay(None, &env.ssh)?,
                notices: Vec::new(),
            }
        }
    };

    if let Some(prefix) = &env.key_prefix {
        validate_prefix(prefix)?;
        settings.key_prefix = prefix.clone();
    }
    if settings.has_mysql() || servers != Servers::RedisOnly {
        parse_url("MySQL", settings.mysql_url.expose_secret(), MYSQL_SCHEMES)?;
    }
    if settings.has_redis() || servers != Servers::MysqlOnly {
        parse_redis_url("Redis", settings.redis_url.expose_secret())?;
    }
    if let Some(replica) = &settings.mysql_replica_url {
        parse_url("MySQL replica", replica.expose_secret(), MYSQL_SCHEMES)?;
    }
    settings.tls = settings.tls.overlay(env.tls.0.as_ref().map_err(|bad| ProfileError::SslMode(bad.clone()))?);
    settings.tls.validate(settings.redis_url.expose_secret())?;
    settings.notices = notices;
    Ok(settings)
}

/// Resolves `--profile` (or none) with this process's environment, the profiles file in its
/// default place and the OS keychain. The keychain client blocks, so it runs off the async
/// runtime. What both front ends call.
pub async fn resolve_for_process(profile: Option<&str>) -> Result<ConnectionSettings, ProfileError> {
    let store = ProfileStore::load_default()?;
    let env = EnvOverrides::from_process_env();
    let profile = profile.map(str::to_string);
    tokio::task::spawn_blocking(move || resolve(&store, profile.as_deref(), &env, &super::KeychainStore))
        .await
        .expect("profile resolution does not panic")
}

/// [`resolve_for_process`] for a sale with no database to read ([`resolve_without_mysql`]).
pub async fn resolve_for_process_without_mysql(profile: Option<&str>) -> Result<ConnectionSettings, ProfileError> {
    resolve_for_process_servers(profile, Servers::RedisOnly).await
}

/// [`resolve_for_process`] for a sale that uses `servers` only ([`resolve_for_servers`]).
pub async fn resolve_for_process_servers(
    profile: Option<&str>,
    servers: Servers,
) -> Result<ConnectionSettings, ProfileError> {
    let store = ProfileStore::load_default()?;
    let env = EnvOverrides::from_process_env();
    let profile = profile.map(str::to_string);
    tokio::task::spawn_blocking(move || {
        resolve_for_servers(&store, profile.as_deref(), &env, &super::KeychainStore, servers)
    })
    .await
    .expect("profile resolution does not panic")
}

/// The environment label of a profile whose fields the environment may override. The
/// profile's label describes the profile's servers: once `STOCKGUARD_*_URL` points elsewhere
/// it says nothing about where the connection goes, and a sandbox label on a production
/// server would skip the production confirmation. So an overridden connection is labelled by
/// `STOCKGUARD_ENVIRONMENT` when given, else production (the most careful), with a notice.
/// `STOCKGUARD_ENVIRONMENT` alone never relabels a profile's own servers.
fn overridden_label(
    profile: &str,
    label: EnvironmentKind,
    env: &EnvOverrides,
    notices: &mut Vec<Notice>,
) -> Result<EnvironmentKind, ProfileError> {
    let overrides: Vec<&str> = [
        ("STOCKGUARD_MYSQL_URL", env.mysql_url.is_some()),
        ("STOCKGUARD_MYSQL_REPLICA_URL", env.mysql_replica_url.is_some()),
        ("STOCKGUARD_REDIS_URL", env.redis_url.is_some()),
    ]
    .into_iter()
    .filter_map(|(var, set)| set.then_some(var))
    .collect();
    if overrides.is_empty() {
        return Ok(label);
    }
    match env.environment.as_deref() {
        Some(kind) => parse_environment(kind),
        None => {
            if label != EnvironmentKind::Production {
                notices.push(Notice::OverriddenIsProduction {
                    overrides: overrides.iter().map(|v| v.to_string()).collect(),
                    profile: profile.to_string(),
                    label,
                });
            }
            Ok(EnvironmentKind::Production)
        }
    }
}

fn parse_environment(kind: &str) -> Result<EnvironmentKind, ProfileError> {
    match kind {
        "production" => Ok(EnvironmentKind::Production),
        "staging" => Ok(EnvironmentKind::Staging),
        "sandbox" => Ok(EnvironmentKind::Sandbox),
        other => Err(ProfileError::Parse {
            path: "STOCKGUARD_ENVIRONMENT".into(),
            reason: format!("`{other}` is not one of production, staging, sandbox"),
        }),
    }
}

/// Keychain first. Where no keychain exists, the environment variable, with a plain notice;
/// where neither, a clear error. Never a silent fallback.
fn fetch_secret(
    profile: &str,
    slot: SecretSlot,
    env: &EnvOverrides,
    secrets: &dyn SecretStore,
    notices: &mut Vec<Notice>,
) -> Result<SecretString, ProfileError> {
    match secrets.get(profile, slot) {
        SecretLookup::Found(pw) => Ok(pw),
        SecretLookup::Missing => Err(ProfileError::MissingSecret { profile: profile.to_string(), slot }),
        SecretLookup::Unavailable(reason) => match env.password(slot) {
            Some(pw) => {
                notices.push(Notice::PasswordFromEnvironment { reason, slot, env_var: slot.env_var().to_string() });
                Ok(pw.clone())
            }
            None => Err(ProfileError::NoKeychain { reason, slot, env_var: slot.env_var() }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_ask_the_one_rule_with_their_role_and_read_only_mark() {
        let mut s = ConnectionSettings::from_urls(EnvironmentKind::Sandbox, "mysql://u@h/db", "redis://h/", "sg");
        for role in Role::ALL {
            for action in Action::ALL {
                s.role = role;
                s.read_only = false;
                assert_eq!(s.may(action), crate::action::may(role, false, action), "{role} {action}");
                s.read_only = true;
                assert_eq!(s.may(action), Err(Refused::ReadOnly { action }), "{role} {action}");
            }
        }
    }

    use crate::profile::Profile;

    /// A keychain that is not there, as on a headless CI box.
    struct NoKeychain;
    impl SecretStore for NoKeychain {
        fn get(&self, _: &str, _: SecretSlot) -> SecretLookup {
            SecretLookup::Unavailable("no Secret Service on the session bus".into())
        }
        fn set(&self, _: &str, _: SecretSlot, _: &SecretString) -> Result<(), SecretLookup> {
            Err(SecretLookup::Unavailable("none".into()))
        }
        fn delete(&self, _: &str, _: SecretSlot) -> Result<(), SecretLookup> {
            Err(SecretLookup::Unavailable("none".into()))
        }
    }

    fn store_with_secret_profile() -> (tempfile::TempDir, ProfileStore) {
        let dir = tempfile::tempdir().unwrap();
        let mut store = ProfileStore::load(&dir.path().join("p.toml")).unwrap();
        store
            .upsert(
                "prod",
                Profile {
                    environment: EnvironmentKind::Production,
                    mysql_url: "mysql://app@db:3306/sale".into(),
                    mysql_replica_url: None,
                    redis_url: "redis://cache:6379/".into(),
                    key_prefix: "sale1".into(),
                    role: Role::Oncall,
                    read_only: true,
                    thresholds: Default::default(),
                    adapter: None,
                    state_url: None,
                    tls: Default::default(),
                    ssh_tunnel: None,
                    secrets: [SecretSlot::Mysql].into_iter().collect(),
                    passwords_from_env: Default::default(),
                },
            )
            .unwrap();
        (dir, store)
    }

    #[test]
    fn without_a_keychain_a_secret_profile_fails_loudly_naming_the_env_var() {
        let (_dir, store) = store_with_secret_profile();
        let err = resolve(&store, Some("prod"), &EnvOverrides::default(), &NoKeychain).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("keychain is not available") && msg.contains("STOCKGUARD_MYSQL_PASSWORD"), "{msg}");
    }

    #[test]
    fn without_a_keychain_the_env_password_is_used_and_the_user_is_told() {
        let (_dir, store) = store_with_secret_profile();
        let env = EnvOverrides {
            passwords: vec![(SecretSlot::Mysql, SecretString::from("s3cret".to_string()))],
            ..Default::default()
        };
        let s = resolve(&store, Some("prod"), &env, &NoKeychain).unwrap();
        assert_eq!(s.mysql_url.expose_secret(), "mysql://app:s3cret@db:3306/sale");
        assert_eq!(s.notices.len(), 1);
        assert!(s.notices[0].to_string().contains("STOCKGUARD_MYSQL_PASSWORD"));
        assert!(!s.mysql_display().contains("s3cret"));
        assert!(s.read_only);
    }

    #[test]
    fn a_password_the_profile_takes_from_the_environment_is_its_variable_for_every_server_or_a_clear_error() {
        let (_dir, mut store) = store_with_secret_profile();
        let mut profile = store.get("prod").unwrap().clone();
        profile.secrets.clear();
        profile.passwords_from_env = [SecretSlot::Mysql, SecretSlot::Redis].into_iter().collect();
        profile.redis_url = "redis://a:6379,redis://b:6379".into();
        store.upsert("prod", profile).unwrap();
        let env = EnvOverrides {
            passwords: vec![
                (SecretSlot::Mysql, SecretString::from("m".to_string())),
                (SecretSlot::Redis, SecretString::from("r".to_string())),
            ],
            ..Default::default()
        };
        // No keychain is asked: the variables are the profile's own source.
        let s = resolve(&store, Some("prod"), &env, &NoKeychain).unwrap();
        assert_eq!(s.mysql_url.expose_secret(), "mysql://app:m@db:3306/sale");
        assert_eq!(s.redis_url.expose_secret(), "redis://:r@a:6379,redis://:r@b:6379");
        assert!(s.notices.is_empty(), "{:?}", s.notices);

        let env = EnvOverrides { passwords: env.passwords[..1].to_vec(), ..Default::default() };
        let err = resolve(&store, Some("prod"), &env, &NoKeychain).unwrap_err();
        assert_eq!(
            err.to_string(),
            "profile `prod` takes its redis password from STOCKGUARD_REDIS_PASSWORD, which is not set: set \
             STOCKGUARD_REDIS_PASSWORD for this run"
        );
    }

    #[test]
    fn environment_variables_override_the_profile() {
        let (_dir, store) = store_with_secret_profile();
        let env = EnvOverrides {
            mysql_url: Some("mysql://root@127.0.0.1:3306/x".into()),
            redis_url: Some("redis://127.0.0.1:6379/".into()),
            key_prefix: Some("ci7".into()),
            ..Default::default()
        };
        // The overridden URL is used whole: no keychain look-up, so no keychain error.
        let s = resolve(&store, Some("prod"), &env, &NoKeychain).unwrap();
        assert_eq!(s.mysql_url.expose_secret(), "mysql://root@127.0.0.1:3306/x");
        assert_eq!(s.key_prefix, "ci7");
        assert_eq!(s.environment, EnvironmentKind::Production);
    }

    fn store_with_sandbox_profile() -> (tempfile::TempDir, ProfileStore) {
        let dir = tempfile::tempdir().unwrap();
        let mut store = ProfileStore::load(&dir.path().join("p.toml")).unwrap();
        store
            .upsert(
                "sandbox",
                Profile {
                    environment: EnvironmentKind::Sandbox,
                    mysql_url: "mysql://root@127.0.0.1:3306/stockguard".into(),
                    mysql_replica_url: None,
                    redis_url: "redis://127.0.0.1:6379/".into(),
                    key_prefix: "sg".into(),
                    role: Role::Oncall,
                    read_only: false,
                    thresholds: Default::default(),
                    adapter: None,
                    state_url: None,
                    tls: Default::default(),
                    ssh_tunnel: None,
                    secrets: Default::default(),
                    passwords_from_env: Default::default(),
                },
            )
            .unwrap();
        (dir, store)
    }

    #[test]
    fn a_sandbox_profile_whose_connection_is_overridden_is_labelled_production() {
        let (_dir, store) = store_with_sandbox_profile();
        for env in [
            EnvOverrides { mysql_url: Some("mysql://app@prod-db:3306/sale".into()), ..Default::default() },
            EnvOverrides { redis_url: Some("redis://prod-cache:6379/".into()), ..Default::default() },
            EnvOverrides { mysql_replica_url: Some("mysql://app@prod-replica:3306/sale".into()), ..Default::default() },
        ] {
            let s = resolve(&store, Some("sandbox"), &env, &NoKeychain).unwrap();
            assert_eq!(s.environment, EnvironmentKind::Production, "{env:?}");
            assert!(
                s.notices.iter().any(|n| n.to_string().contains("STOCKGUARD_ENVIRONMENT")),
                "the user is told why: {:?}",
                s.notices
            );
        }
    }

    #[test]
    fn an_overridden_connection_takes_the_label_stockguard_environment_gives() {
        let (_dir, store) = store_with_sandbox_profile();
        let env = EnvOverrides {
            mysql_url: Some("mysql://root@127.0.0.1:3306/ci".into()),
            environment: Some("sandbox".into()),
            ..Default::default()
        };
        let s = resolve(&store, Some("sandbox"), &env, &NoKeychain).unwrap();
        assert_eq!(s.environment, EnvironmentKind::Sandbox);
    }

    #[test]
    fn a_key_prefix_override_alone_keeps_the_profiles_label() {
        let (_dir, store) = store_with_sandbox_profile();
        let env = EnvOverrides { key_prefix: Some("ci7".into()), ..Default::default() };
        let s = resolve(&store, Some("sandbox"), &env, &NoKeychain).unwrap();
        assert_eq!(s.environment, EnvironmentKind::Sandbox);
    }

    #[test]
    fn stockguard_environment_cannot_relabel_a_profile_it_does_not_override() {
        let (_dir, store) = store_with_secret_profile();
        let env = EnvOverrides {
            environment: Some("sandbox".into()),
            passwords: vec![(SecretSlot::Mysql, SecretString::from("s3cret".to_string()))],
            ..Default::default()
        };
        let s = resolve(&store, Some("prod"), &env, &NoKeychain).unwrap();
        assert_eq!(s.environment, EnvironmentKind::Production);
    }

    #[test]
    fn an_unlabelled_env_only_connection_is_treated_as_production() {
        let dir = tempfile::tempdir().unwrap();
        let store = ProfileStore::load(&dir.path().join("p.toml")).unwrap();
        let env = EnvOverrides {
            mysql_url: Some("mysql://root@127.0.0.1:3306/x".into()),
            redis_url: Some("redis://127.0.0.1:6379/".into()),
            ..Default::default()
        };
        let s = resolve(&store, None, &env, &NoKeychain).unwrap();
        assert_eq!(s.environment, EnvironmentKind::Production);
    }

    #[test]
    fn one_url_without_the_other_names_both_variables() {
        let dir = tempfile::tempdir().unwrap();
        let store = ProfileStore::load(&dir.path().join("p.toml")).unwrap();
        let env = EnvOverrides { mysql_url: Some("mysql://root@127.0.0.1:3306/x".into()), ..Default::default() };
        let err = resolve(&store, None, &env, &NoKeychain).unwrap_err();
        assert!(matches!(err, ProfileError::OneUrlOnly { missing: "STOCKGUARD_REDIS_URL", .. }), "{err}");
        assert!(err.to_string().starts_with("STOCKGUARD_MYSQL_URL is set but STOCKGUARD_REDIS_URL is not"), "{err}");
    }

    #[test]
    fn a_mysql_url_alone_resolves_only_for_a_sale_without_redis() {
        let dir = tempfile::tempdir().unwrap();
        let store = ProfileStore::load(&dir.path().join("p.toml")).unwrap();
        let env = EnvOverrides { mysql_url: Some("mysql://root@127.0.0.1:3306/x".into()), ..Default::default() };
        let s = resolve_for_servers(&store, None, &env, &NoKeychain, Servers::MysqlOnly).unwrap();
        assert!(s.has_mysql() && !s.has_redis());
        for servers in [Servers::Both, Servers::RedisOnly] {
            let err = resolve_for_servers(&store, None, &env, &NoKeychain, servers).unwrap_err();
            assert!(matches!(err, ProfileError::OneUrlOnly { missing: "STOCKGUARD_REDIS_URL", .. }), "{err}");
        }
    }

    #[test]
    fn a_redis_url_alone_resolves_only_for_a_sale_without_a_database() {
        let dir = tempfile::tempdir().unwrap();
        let store = ProfileStore::load(&dir.path().join("p.toml")).unwrap();
        let env = EnvOverrides { redis_url: Some("redis://127.0.0.1:6379/".into()), ..Default::default() };
        let s = resolve_without_mysql(&store, None, &env, &NoKeychain).unwrap();
        assert!(!s.has_mysql());
        assert_eq!(s.environment, EnvironmentKind::Production, "unlabelled is still production");
        let err = resolve(&store, None, &env, &NoKeychain).unwrap_err();
        assert!(matches!(err, ProfileError::OneUrlOnly { missing: "STOCKGUARD_MYSQL_URL", .. }), "{err}");
        let both = EnvOverrides { mysql_url: Some("mysql://root@127.0.0.1:3306/x".into()), ..env };
        assert!(resolve_without_mysql(&store, None, &both, &NoKeychain).unwrap().has_mysql());
    }

    #[test]
    fn no_profile_and_no_urls_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let store = ProfileStore::load(&dir.path().join("p.toml")).unwrap();
        let err = resolve(&store, None, &EnvOverrides::default(), &NoKeychain).unwrap_err();
        assert!(matches!(err, ProfileError::NoProfile));
    }

    #[test]
    fn a_profile_names_its_adapter_file_and_its_state_database_with_the_state_password() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = ProfileStore::load(&dir.path().join("p.toml")).unwrap();
        store
            .upsert(
                "theirs",
                Profile {
                    environment: EnvironmentKind::Staging,
                    mysql_url: "mysql://reader@db:3306/sale".into(),
                    mysql_replica_url: None,
                    redis_url: "redis://cache:6379/".into(),
                    key_prefix: "sg".into(),
                    role: Role::Oncall,
                    read_only: false,
                    thresholds: Default::default(),
                    adapter: Some("/etc/sales/course.toml".into()),
                    state_url: Some("mysql://sg@state:3306/stockguard_state".into()),
                    tls: Default::default(),
                    ssh_tunnel: None,
                    secrets: [SecretSlot::State].into_iter().collect(),
                    passwords_from_env: Default::default(),
                },
            )
            .unwrap();
        let env = EnvOverrides {
            passwords: vec![(SecretSlot::State, SecretString::from("st8".to_string()))],
            ..Default::default()
        };
        let s = resolve(&store, Some("theirs"), &env, &NoKeychain).unwrap();
        assert_eq!(s.adapter.as_deref(), Some(std::path::Path::new("/etc/sales/course.toml")));
        assert_eq!(s.state_url.unwrap().expose_secret(), "mysql://sg:st8@state:3306/stockguard_state");
        assert_eq!(
            chosen(&store, Some("theirs"), &env).unwrap().unwrap().1.adapter.as_deref(),
            Some("/etc/sales/course.toml")
        );

        let mut bad = store.get("theirs").unwrap().clone();
        bad.state_url = Some("mysql://sg:pw@state:3306/s".into());
        assert!(matches!(bad.validate(), Err(ProfileError::PasswordInUrl { what: "state database" })));
    }
}
