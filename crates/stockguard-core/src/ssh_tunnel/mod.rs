//! An SSH bastion ("jump host") in-process: the sale's MySQL and Redis reached through it.
//!
//! [`Bastion::connect`] opens one SSH session (the `russh` client, no `ssh` process) to
//! `ssh://user@host:port`, checks the server's host key against a known_hosts file and
//! authenticates with an OpenSSH private key file (its passphrase optional).
//! [`Bastion::forward`] then listens on a loopback port and carries each accepted connection
//! to a target `host:port` as the bastion sees it, over a `direct-tcpip` channel (what
//! `ssh -L` does). A [`Forward`] stops listening when dropped; the session ends when the
//! bastion and its forwards are all dropped.
//!
//! An unknown or changed host key is refused in one line that shows its SHA256 fingerprint
//! and the command that trusts it ([`TunnelError::UnknownHostKey`],
//! [`TunnelError::ChangedHostKey`]).
//!
//! [`forward_to`] is what connection opening calls: the process's one session per bastion
//! and one forward per target ([`shared`]).

mod shared;
mod spec;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use russh::client;
use russh::keys::{HashAlg, PrivateKeyWithHashAlg, PublicKey, PublicKeyOrCertificate};
use secrecy::{ExposeSecret as _, SecretString};
use tokio::net::TcpListener;

pub use shared::forward_to;
pub use spec::{BastionAddress, MalformedBastion};

/// How long to wait for the bastion before calling it unreachable.
pub const BASTION_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything needed to open the session: the bastion, the key, the trusted host keys.
#[derive(Clone)]
pub struct BastionConfig {
    pub address: BastionAddress,
    /// An OpenSSH private key file.
    pub key: PathBuf,
    /// The key file's passphrase, when it has one.
    pub passphrase: Option<SecretString>,
    /// The known_hosts file holding the bastion's host key.
    pub known_hosts: PathBuf,
}

impl std::fmt::Debug for BastionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BastionConfig")
            .field("address", &self.address.to_string())
            .field("key", &self.key)
            .field("passphrase", &self.passphrase.as_ref().map(|_| "***"))
            .field("known_hosts", &self.known_hosts)
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TunnelError {
    #[error(transparent)]
    Malformed(#[from] MalformedBastion),
    #[error("cannot read the SSH key {path}: {source}{hint}")]
    Key {
        path: PathBuf,
        #[source]
        source: russh::keys::Error,
        /// What to check: the passphrase, when the file is enciphered.
        hint: &'static str,
    },
    #[error("cannot read the known_hosts file {path}: {source}")]
    KnownHosts {
        path: PathBuf,
        #[source]
        source: russh::keys::Error,
    },
    #[error("cannot reach the SSH bastion {address}: {reason}")]
    Unreachable { address: String, reason: String },
    #[error(
        "the SSH bastion {address} offered an unknown host key {offered} (not in {known_hosts}); \
         if the bastion's admin confirms that fingerprint, trust it with: {trust}"
    )]
    UnknownHostKey { address: String, offered: String, known_hosts: PathBuf, trust: String },
    #[error(
        "the SSH bastion {address}'s host key CHANGED: it offers {offered}, not the key at {known_hosts} \
         line {line} (someone may be in the middle); if the bastion's admin confirms the new key: {trust}"
    )]
    ChangedHostKey {
        address: String,
        /// The key's algorithm and SHA256 fingerprint, as `ssh-keygen -l` says them.
        offered: String,
        known_hosts: PathBuf,
        line: usize,
        trust: String,
    },
    #[error("the SSH bastion {address} refused the key {key} for user {user}")]
    AuthRefused { address: String, user: String, key: PathBuf },
    #[error("SSH to the bastion {address}: {source}")]
    Ssh {
        address: String,
        #[source]
        source: russh::Error,
    },
    #[error("cannot listen on a loopback port for the tunnel: {0}")]
    Listen(#[source] std::io::Error),
}

/// The session's callbacks: only the host key check matters here.
struct HostKeyCheck {
    address: BastionAddress,
    known_hosts: PathBuf,
}

/// What the check found wrong, carried out of the callback as russh's error type.
#[derive(Debug)]
enum SessionError {
    Ssh(russh::Error),
    Refused(Box<TunnelError>),
}

impl From<russh::Error> for SessionError {
    fn from(e: russh::Error) -> Self {
        Self::Ssh(e)
    }
}

impl client::Handler for HostKeyCheck {
    type Error = SessionError;

    async fn check_server_key(&mut self, offered: &PublicKeyOrCertificate) -> Result<bool, Self::Error> {
        let offered = match offered {
            PublicKeyOrCertificate::PublicKey { key, .. } => key.clone(),
            // A certificate is held to its key: no certificate authority is trusted here.
            PublicKeyOrCertificate::Certificate(cert) => PublicKey::from(cert.public_key().clone()),
        };
        check_host_key(&self.address, &self.known_hosts, &offered)
            .map(|()| true)
            .map_err(|e| SessionError::Refused(Box::new(e)))
    }
}

/// Accepts `offered` only if the known_hosts file holds exactly that key for the bastion.
fn check_host_key(address: &BastionAddress, known_hosts: &Path, offered: &PublicKey) -> Result<(), TunnelError> {
    let recorded = russh::keys::known_hosts::known_host_keys_path(&address.host, address.port, known_hosts)
        .map_err(|source| TunnelError::KnownHosts { path: known_hosts.to_path_buf(), source })?;
    if recorded.iter().any(|(_, key)| key.key_data() == offered.key_data()) {
        return Ok(());
    }
    let shown = format!("{} {}", offered.algorithm(), offered.fingerprint(HashAlg::Sha256));
    let scan = format!("ssh-keyscan -p {} {} >> {}", address.port, address.host, known_hosts.display());
    if let Some((line, _)) = recorded.iter().find(|(_, key)| key.algorithm() == offered.algorithm()) {
        return Err(TunnelError::ChangedHostKey {
            address: address.to_string(),
            offered: shown,
            known_hosts: known_hosts.to_path_buf(),
            line: *line,
            trust: format!("ssh-keygen -R '{}' -f {} && {scan}", address.known_hosts_name(), known_hosts.display()),
        });
    }
    Err(TunnelError::UnknownHostKey {
        address: address.to_string(),
        offered: shown,
        known_hosts: known_hosts.to_path_buf(),
        trust: scan,
    })
}

/// One authenticated SSH session to the bastion.
pub struct Bastion {
    handle: Arc<client::Handle<HostKeyCheck>>,
    address: BastionAddress,
}

impl std::fmt::Debug for Bastion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bastion").field("address", &self.address.to_string()).finish()
    }
}

impl Bastion {
    /// Connects, checks the host key, authenticates with the key file.
    pub async fn connect(config: &BastionConfig) -> Result<Self, TunnelError> {
        let address = config.address.clone();
        let shown = address.to_string();
        let key = russh::keys::load_secret_key(&config.key, config.passphrase.as_ref().map(|p| p.expose_secret()))
            .map_err(|source| {
                let hint = match (&source, &config.passphrase) {
                    (russh::keys::Error::KeyIsEncrypted, _) => {
                        " (the key has a passphrase: set STOCKGUARD_SSH_KEY_PASSPHRASE)"
                    }
                    (_, Some(_)) => " (is STOCKGUARD_SSH_KEY_PASSPHRASE the key's passphrase?)",
                    (_, None) => "",
                };
                TunnelError::Key { path: config.key.clone(), source, hint }
            })?;
        let ssh_config =
            Arc::new(client::Config { keepalive_interval: Some(Duration::from_secs(15)), ..Default::default() });
        let check = HostKeyCheck { address: address.clone(), known_hosts: config.known_hosts.clone() };
        let connecting = client::connect(ssh_config, (address.host.as_str(), address.port), check);
        let mut handle = match tokio::time::timeout(BASTION_TIMEOUT, connecting).await {
            Err(_) => {
                return Err(TunnelError::Unreachable {
                    address: shown,
                    reason: format!("no answer within {} s", BASTION_TIMEOUT.as_secs()),
                })
            }
            Ok(Err(SessionError::Refused(refusal))) => return Err(*refusal),
            Ok(Err(SessionError::Ssh(russh::Error::IO(e)))) => {
                return Err(TunnelError::Unreachable { address: shown, reason: e.to_string() })
            }
            Ok(Err(SessionError::Ssh(source))) => return Err(TunnelError::Ssh { address: shown, source }),
            Ok(Ok(handle)) => handle,
        };
        let ssh_failed = |source| TunnelError::Ssh { address: shown.clone(), source };
        // Only an RSA key has a hash to choose (and asking waits for the server's ext-info).
        let hash = match key.algorithm().is_rsa() {
            true => handle.best_supported_rsa_hash().await.map_err(ssh_failed)?.flatten(),
            false => None,
        };
        let auth = handle
            .authenticate_publickey(&address.user, PrivateKeyWithHashAlg::new(Arc::new(key), hash))
            .await
            .map_err(ssh_failed)?;
        if !auth.success() {
            return Err(TunnelError::AuthRefused {
                address: shown,
                user: address.user.clone(),
                key: config.key.clone(),
            });
        }
        Ok(Self { handle: Arc::new(handle), address })
    }

    /// Listens on a free loopback port and forwards each connection to `host:port` as the
    /// bastion sees it.
    pub async fn forward(&self, host: &str, port: u16) -> Result<Forward, TunnelError> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.map_err(TunnelError::Listen)?;
        let local = listener.local_addr().map_err(TunnelError::Listen)?;
        let handle = self.handle.clone();
        let target = (host.to_string(), port);
        let accepting = tokio::spawn(async move {
            while let Ok((mut socket, peer)) = listener.accept().await {
                let handle = handle.clone();
                let (host, port) = target.clone();
                tokio::spawn(async move {
                    let channel = match handle
                        .channel_open_direct_tcpip(
                            host.as_str(),
                            u32::from(port),
                            peer.ip().to_string(),
                            u32::from(peer.port()),
                        )
                        .await
                    {
                        Ok(channel) => channel,
                        Err(e) => {
                            tracing::warn!(%host, port, error = %e, "the bastion refused to open a forward");
                            return;
                        }
                    };
                    let mut stream = channel.into_stream();
                    if let Err(e) = tokio::io::copy_bidirectional(&mut socket, &mut stream).await {
                        tracing::debug!(%host, port, error = %e, "a forwarded connection ended");
                    }
                });
            }
        });
        Ok(Forward { local, accepting })
    }
}

/// A local loopback port forwarded through the bastion; stops listening when dropped.
#[derive(Debug)]
pub struct Forward {
    local: SocketAddr,
    accepting: tokio::task::JoinHandle<()>,
}

impl Forward {
    /// The loopback address to connect to instead of the target.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }
}

impl Drop for Forward {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}
