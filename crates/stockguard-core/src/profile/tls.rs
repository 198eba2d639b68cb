//! TLS to a profile's servers: the files that pin a CA and prove who we are.
//!
//! Managed Redis and MySQL speak TLS, often want a client certificate, and are reached with
//! a CA of their own. A profile names those files (PEM, as absolute paths); the environment
//! overrides each one for a run, the way `STOCKGUARD_*_URL` overrides the URLs:
//!
//! | profile field          | `profile add` flag  | variable                    |
//! |------------------------|---------------------|-----------------------------|
//! | `tls.redis.ca`         | `--redis-ca`        | `STOCKGUARD_REDIS_CA`       |
//! | `tls.redis.cert`       | `--redis-cert`      | `STOCKGUARD_REDIS_CERT`     |
//! | `tls.redis.key`        | `--redis-key`       | `STOCKGUARD_REDIS_KEY`      |
//! | `tls.mysql.ssl_mode`   | `--mysql-ssl-mode`  | `STOCKGUARD_MYSQL_SSL_MODE` |
//! | `tls.mysql.ca`         | `--mysql-ca`        | `STOCKGUARD_MYSQL_CA`       |
//! | `tls.mysql.cert`       | `--mysql-cert`      | `STOCKGUARD_MYSQL_CERT`     |
//! | `tls.mysql.key`        | `--mysql-key`       | `STOCKGUARD_MYSQL_KEY`      |
//!
//! Redis speaks TLS when its URL says `rediss://`; with a CA named, only that CA is trusted
//! (the system's roots are not), else the system's roots. MySQL's mode is the one `mysql`
//! and sqlx name (`DISABLED` .. `VERIFY_IDENTITY`); unset, it is `VERIFY_IDENTITY` when a CA
//! is named (a pinned CA that is never checked would pin nothing) and `PREFERRED` otherwise,
//! as the `mysql` client's default. The files are read when connecting
//! ([`crate::connect`]); here they are only checked to make sense together.

use serde::{Deserialize, Serialize};

use super::ProfileError;

/// The TLS files and mode of a profile's two servers (empty: as the URLs say).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Tls {
    #[serde(default, skip_serializing_if = "RedisTls::is_empty")]
    pub redis: RedisTls,
    #[serde(default, skip_serializing_if = "MysqlTls::is_empty")]
    pub mysql: MysqlTls,
}

/// A CA to pin, and a client certificate with its key (PEM files): Redis's TLS, and the files
/// of MySQL's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CertFiles {
    /// The CA the server's certificate must chain to; the only one trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca: Option<String>,
    /// Our certificate, for a server that asks for one (mutual TLS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert: Option<String>,
    /// The key of [`cert`](Self::cert) (unencrypted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// Redis over TLS (`rediss://`): its CA and client certificate.
pub type RedisTls = CertFiles;

/// MySQL's TLS: the mode, and its CA and client certificate.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MysqlTls {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssl_mode: Option<SslMode>,
    #[serde(flatten)]
    pub files: CertFiles,
}

/// MySQL's `ssl-mode`, weakest to strongest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SslMode {
    /// Never TLS.
    Disabled,
    /// TLS when the server offers it, its certificate unchecked.
    Preferred,
    /// TLS or no connection, the certificate unchecked.
    Required,
    /// TLS with a certificate the CA signed.
    VerifyCa,
    /// As `VERIFY_CA`, and the certificate names the host connected to.
    VerifyIdentity,
}

impl SslMode {
    pub const ALL: [Self; 5] = [Self::Disabled, Self::Preferred, Self::Required, Self::VerifyCa, Self::VerifyIdentity];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Disabled => "DISABLED",
            Self::Preferred => "PREFERRED",
            Self::Required => "REQUIRED",
            Self::VerifyCa => "VERIFY_CA",
            Self::VerifyIdentity => "VERIFY_IDENTITY",
        }
    }

    /// Whether the certificate is checked against a CA.
    pub fn verifies(self) -> bool {
        self >= Self::VerifyCa
    }
}

impl std::fmt::Display for SslMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An `ssl-mode` that is not one of the five.
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown MySQL ssl-mode `{0}`: use DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY")]
pub struct UnknownSslMode(pub String);

impl std::str::FromStr for SslMode {
    type Err = UnknownSslMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_uppercase().replace('-', "_");
        Self::ALL.into_iter().find(|m| m.as_str() == wanted).ok_or_else(|| UnknownSslMode(s.to_string()))
    }
}

impl CertFiles {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Each field of `over` that is set replaces ours.
    fn overlay(&self, over: &Self) -> Self {
        Self {
            ca: over.ca.clone().or_else(|| self.ca.clone()),
            cert: over.cert.clone().or_else(|| self.cert.clone()),
            key: over.key.clone().or_else(|| self.key.clone()),
        }
    }

    /// `{prefix}_CA`, `{prefix}_CERT` and `{prefix}_KEY`, read through `var`.
    fn from_env(var: &impl Fn(&str) -> Option<String>, prefix: &str) -> Self {
        Self {
            ca: var(&format!("{prefix}_CA")),
            cert: var(&format!("{prefix}_CERT")),
            key: var(&format!("{prefix}_KEY")),
        }
    }

    /// A certificate needs its key, and a key its certificate (`flag`: `--redis`, `--mysql`).
    fn paired(&self, server: &str, flag: &str) -> Result<(), ProfileError> {
        let missing = match (&self.cert, &self.key) {
            (Some(_), None) => format!("the {server} client certificate needs its key: {flag}-key"),
            (None, Some(_)) => format!("the {server} client key needs its certificate: {flag}-cert"),
            _ => return Ok(()),
        };
        Err(ProfileError::Tls(missing))
    }
}

impl MysqlTls {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    fn overlay(&self, over: &Self) -> Self {
        Self { ssl_mode: over.ssl_mode.or(self.ssl_mode), files: self.files.overlay(&over.files) }
    }

    /// The mode a connection asks for: the one named, else `VERIFY_IDENTITY` with a CA and
    /// `PREFERRED` without (the module's doc says why).
    pub fn mode(&self) -> SslMode {
        self.ssl_mode.unwrap_or(if self.files.ca.is_some() { SslMode::VerifyIdentity } else { SslMode::Preferred })
    }
}

impl Tls {
    pub fn is_empty(&self) -> bool {
        self.redis.is_empty() && self.mysql.is_empty()
    }

    /// The profile's TLS with the environment's fields put over it.
    pub fn overlay(&self, over: &Self) -> Self {
        Self { redis: self.redis.overlay(&over.redis), mysql: self.mysql.overlay(&over.mysql) }
    }

    /// Reads the `STOCKGUARD_REDIS_CA`.. and `STOCKGUARD_MYSQL_SSL_MODE`.. variables through
    /// `var` (the process's environment, or a test's).
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Self, ProfileError> {
        let ssl_mode = match var("STOCKGUARD_MYSQL_SSL_MODE") {
            Some(mode) => Some(mode.parse().map_err(ProfileError::SslMode)?),
            None => None,
        };
        Ok(Self {
            redis: CertFiles::from_env(&var, "STOCKGUARD_REDIS"),
            mysql: MysqlTls { ssl_mode, files: CertFiles::from_env(&var, "STOCKGUARD_MYSQL") },
        })
    }

    /// Checks that the fields make sense with the URLs they go with: a Redis CA or certificate
    /// needs a `rediss://` URL, a certificate needs its key (and the key its certificate), and
    /// a MySQL CA or certificate needs a mode that uses TLS.
    pub fn validate(&self, redis_url: &str) -> Result<(), ProfileError> {
        let r = &self.redis;
        if (r.ca.is_some() || r.cert.is_some()) && !redis_url.is_empty() {
            let plain = crate::redis_link::seeds(redis_url).iter().any(|seed| !seed.starts_with("rediss://"));
            if plain {
                return Err(ProfileError::Tls(
                    "a Redis CA or client certificate needs a `rediss://` URL (TLS); the Redis URL says `redis://`"
                        .into(),
                ));
            }
        }
        r.paired("Redis", "--redis")?;
        let m = &self.mysql;
        m.files.paired("MySQL", "--mysql")?;
        if m.mode() == SslMode::Disabled && (m.files.ca.is_some() || m.files.cert.is_some()) {
            return Err(ProfileError::Tls(
                "a MySQL CA or client certificate with --mysql-ssl-mode DISABLED would never be used".into(),
            ));
        }
        if m.mode().verifies() && m.files.ca.is_none() {
            return Err(ProfileError::Tls(format!(
                "--mysql-ssl-mode {} checks the server's certificate against a CA: name it with --mysql-ca \
                 (STOCKGUARD_MYSQL_CA)",
                m.mode()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn the_environment_overrides_each_field_of_the_profile_on_its_own() {
        let profile = Tls {
            redis: RedisTls {
                ca: Some("/p/ca.pem".into()),
                cert: Some("/p/c.pem".into()),
                key: Some("/p/k.pem".into()),
            },
            mysql: MysqlTls {
                ssl_mode: Some(SslMode::VerifyCa),
                files: CertFiles { ca: Some("/p/mca.pem".into()), ..Default::default() },
            },
        };
        let over = Tls::from_env(env(&[
            ("STOCKGUARD_REDIS_CA", "/e/ca.pem"),
            ("STOCKGUARD_MYSQL_SSL_MODE", "verify_identity"),
        ]))
        .unwrap();
        let tls = profile.overlay(&over);
        assert_eq!(tls.redis.ca.as_deref(), Some("/e/ca.pem"));
        assert_eq!(tls.redis.cert.as_deref(), Some("/p/c.pem"));
        assert_eq!(tls.mysql.mode(), SslMode::VerifyIdentity);
        assert_eq!(tls.mysql.files.ca.as_deref(), Some("/p/mca.pem"));
    }

    #[test]
    fn a_pinned_mysql_ca_is_checked_unless_a_mode_says_otherwise() {
        let pinned = MysqlTls { files: CertFiles { ca: Some("/ca.pem".into()), ..Default::default() }, ssl_mode: None };
        assert_eq!(pinned.mode(), SslMode::VerifyIdentity);
        assert_eq!(MysqlTls::default().mode(), SslMode::Preferred);
    }

    #[test]
    fn files_that_cannot_work_together_are_refused_in_one_line() {
        let redis_ca =
            Tls { redis: RedisTls { ca: Some("/ca.pem".into()), ..Default::default() }, ..Default::default() };
        assert!(redis_ca.validate("redis://cache:6379").unwrap_err().to_string().contains("rediss://"));
        redis_ca.validate("rediss://a:1,rediss://b:2").unwrap();
        let half = Tls { redis: RedisTls { cert: Some("/c.pem".into()), ..Default::default() }, ..Default::default() };
        assert!(half.validate("rediss://cache").unwrap_err().to_string().contains("--redis-key"));
        let unchecked = Tls {
            mysql: MysqlTls { ssl_mode: Some(SslMode::VerifyIdentity), ..Default::default() },
            ..Default::default()
        };
        assert!(unchecked.validate("").unwrap_err().to_string().contains("--mysql-ca"));
        let err = Tls::from_env(env(&[("STOCKGUARD_MYSQL_SSL_MODE", "verify")])).unwrap_err().to_string();
        assert!(err.contains("VERIFY_IDENTITY") && !err.contains('\n'), "{err}");
    }
}
