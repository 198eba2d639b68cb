//! The bastion's address as a profile keeps it: `ssh://user@host:port`.

use std::str::FromStr;

/// `ssh://user@host[:port]` (port 22 when left out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BastionAddress {
    pub user: String,
    pub host: String,
    pub port: u16,
}

#[derive(Debug, thiserror::Error)]
#[error("malformed SSH bastion {given}: {reason} (expected ssh://user@host:port)")]
pub struct MalformedBastion {
    pub given: String,
    pub reason: &'static str,
}

impl FromStr for BastionAddress {
    type Err = MalformedBastion;

    fn from_str(given: &str) -> Result<Self, Self::Err> {
        let bad = |reason| MalformedBastion { given: given.to_string(), reason };
        let url = url::Url::parse(given).map_err(|_| bad("not a URL"))?;
        if url.scheme() != "ssh" {
            return Err(bad("the scheme is not ssh://"));
        }
        if url.password().is_some() {
            return Err(bad("a password has no place here: the bastion takes a key file"));
        }
        if url.username().is_empty() {
            return Err(bad("no user"));
        }
        let host = url.host_str().filter(|h| !h.is_empty()).ok_or_else(|| bad("no host"))?;
        let host = host.trim_start_matches('[').trim_end_matches(']').to_string();
        Ok(Self { user: url.username().to_string(), host, port: url.port().unwrap_or(22) })
    }
}

impl BastionAddress {
    /// The host as a known_hosts file names it: `host`, or `[host]:port` off port 22.
    pub fn known_hosts_name(&self) -> String {
        if self.port == 22 {
            self.host.clone()
        } else {
            format!("[{}]:{}", self.host, self.port)
        }
    }
}

impl std::fmt::Display for BastionAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ssh://{}@{}:{}", self.user, self.host, self.port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bastion_url_without_a_port_means_port_22() {
        let a: BastionAddress = "ssh://ops@jump.example.com".parse().unwrap();
        assert_eq!((a.user.as_str(), a.host.as_str(), a.port), ("ops", "jump.example.com", 22));
        assert_eq!(a.known_hosts_name(), "jump.example.com");
    }

    #[test]
    fn a_bastion_url_off_port_22_is_bracketed_in_known_hosts() {
        let a: BastionAddress = "ssh://ops@10.0.0.5:2222".parse().unwrap();
        assert_eq!(a.known_hosts_name(), "[10.0.0.5]:2222");
        assert_eq!(a.to_string(), "ssh://ops@10.0.0.5:2222");
    }

    #[test]
    fn a_bastion_url_without_a_user_or_with_a_password_is_refused() {
        assert!("ssh://jump.example.com:22".parse::<BastionAddress>().is_err());
        assert!("ssh://ops:secret@jump.example.com".parse::<BastionAddress>().is_err());
        assert!("http://ops@jump.example.com".parse::<BastionAddress>().is_err());
    }
}
