//! TLS on the wire: a profile's files read into what the clients take, and what a connection
//! actually used.
//!
//! **One rustls, one provider**: [`crate::crypto_provider`] makes ring the process default
//! before any Redis TLS connection.
//!
//! [`redis_certificates`] reads a profile's Redis CA and client certificate into the
//! `redis` crate's [`TlsCertificates`]; MySQL's files go to sqlx's options by path
//! ([`crate::connect::mysql_options_with`]). [`Transport`] is what a connection used: the
//! mode MySQL was asked for and the protocol and cipher the session got, and whether Redis
//! speaks TLS. `profile show`, the profile test and the health strip say it.

use serde::Serialize;

use crate::profile::{EnvironmentKind, RedisTls, SslMode};

/// A TLS file that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the {what} file {path}: {source}")]
pub struct TlsFileError {
    pub what: &'static str,
    pub path: String,
    #[source]
    pub source: std::io::Error,
}

fn read(what: &'static str, path: &str) -> Result<Vec<u8>, TlsFileError> {
    std::fs::read(path).map_err(|source| TlsFileError { what, path: path.to_string(), source })
}

/// The Redis CA and client certificate of `tls`, read; `None` when it names no file (a
/// `rediss://` URL then trusts the system's roots).
pub fn redis_certificates(tls: &RedisTls) -> Result<Option<redis::TlsCertificates>, TlsFileError> {
    if tls.ca.is_none() && tls.cert.is_none() {
        return Ok(None);
    }
    let root_cert = tls.ca.as_deref().map(|ca| read("Redis CA", ca)).transpose()?;
    let client_tls = match (&tls.cert, &tls.key) {
        (Some(cert), Some(key)) => Some(redis::ClientTlsConfig {
            client_cert: read("Redis client certificate", cert)?,
            client_key: read("Redis client key", key)?,
        }),
        _ => None,
    };
    Ok(Some(redis::TlsCertificates { client_tls, root_cert }))
}

/// What a connection to the sale's servers used.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Transport {
    /// The `ssl-mode` MySQL was asked for (`None`: no MySQL connection).
    pub mysql_mode: Option<SslMode>,
    /// The session's protocol and cipher, e.g. `TLSv1.3 TLS_AES_256_GCM_SHA384` (`None`: not
    /// encrypted).
    pub mysql_tls: Option<String>,
    /// Whether MySQL was shown a client certificate.
    pub mysql_client_cert: bool,
    /// Whether Redis is spoken over TLS (`rediss://`; `false` too without a Redis).
    pub redis_tls: bool,
    /// Whether only the profile's CA is trusted for Redis (else the system's roots).
    pub redis_ca_pinned: bool,
    /// Whether Redis was shown a client certificate.
    pub redis_client_cert: bool,
    /// Whether there is a Redis connection at all.
    pub has_redis: bool,
}

impl Transport {
    /// The servers whose traffic goes in clear, named for a person ("MySQL", "Redis").
    pub fn in_clear(&self) -> Vec<&'static str> {
        let mut clear = Vec::new();
        if self.mysql_mode.is_some() && self.mysql_tls.is_none() {
            clear.push("MySQL");
        }
        if self.has_redis && !self.redis_tls {
            clear.push("Redis");
        }
        clear
    }

    /// The servers a production sale reaches in clear: what the health strip warns of.
    pub fn in_clear_for(&self, environment: EnvironmentKind) -> Vec<String> {
        if environment != EnvironmentKind::Production {
            return Vec::new();
        }
        self.in_clear().into_iter().map(str::to_string).collect()
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cert = |yes: bool| if yes { ", client certificate" } else { "" };
        if let Some(mode) = self.mysql_mode {
            match &self.mysql_tls {
                Some(tls) => write!(f, "MySQL ssl-mode {mode}: {tls}{}", cert(self.mysql_client_cert))?,
                None => write!(f, "MySQL ssl-mode {mode}: not encrypted")?,
            }
        }
        if self.has_redis {
            if self.mysql_mode.is_some() {
                f.write_str("; ")?;
            }
            match (self.redis_tls, self.redis_ca_pinned) {
                (false, _) => f.write_str("Redis: not encrypted")?,
                (true, true) => write!(f, "Redis: TLS, pinned CA{}", cert(self.redis_client_cert))?,
                (true, false) => write!(f, "Redis: TLS, system CAs{}", cert(self.redis_client_cert))?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_production_sale_in_clear_is_warned_of() {
        let clear = Transport { mysql_mode: Some(SslMode::Preferred), has_redis: true, ..Default::default() };
        assert_eq!(clear.in_clear_for(EnvironmentKind::Production), ["MySQL", "Redis"]);
        assert!(clear.in_clear_for(EnvironmentKind::Sandbox).is_empty());
        let sealed = Transport {
            mysql_mode: Some(SslMode::VerifyIdentity),
            mysql_tls: Some("TLSv1.3 TLS_AES_256_GCM_SHA384".into()),
            has_redis: true,
            redis_tls: true,
            redis_ca_pinned: true,
            ..Default::default()
        };
        assert!(sealed.in_clear_for(EnvironmentKind::Production).is_empty());
        assert_eq!(
            sealed.to_string(),
            "MySQL ssl-mode VERIFY_IDENTITY: TLSv1.3 TLS_AES_256_GCM_SHA384; Redis: TLS, pinned CA"
        );
    }
}
