//! A private OpenSSH server, the bastion of the SSH tunnel tests: `sshd` on a free loopback
//! port with its own config, host key and authorized key in a temp folder, logging at DEBUG1
//! to a file the test reads (the `direct-tcpip` forwards it opened). Started by the test
//! itself as root (`sshd` insists on an absolute path and `/run/sshd`); killed when dropped.
//! Needs `openssh-server` (scripts/install-deps.sh) and `ssh-keygen`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tokio::io::AsyncReadExt as _;

pub struct Sshd {
    pub port: u16,
    child: Child,
    dir: tempfile::TempDir,
}

/// `ssh-keygen` makes an ed25519 key pair without a passphrase at `path` (and `path.pub`).
pub fn keygen(path: &Path) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "stockguard-test", "-f"])
        .arg(path)
        .stdout(Stdio::null())
        .status()
        .expect("ssh-keygen runs (openssh-client; scripts/install-deps.sh installs it)");
    assert!(status.success(), "ssh-keygen made {}", path.display());
}

/// The user the test runs as: the bastion's login.
fn whoami() -> String {
    let out = Command::new("id").arg("-un").output().expect("`id -un` runs");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

impl Sshd {
    /// Starts `sshd`, waiting until it answers with its banner; tries another port if the
    /// one chosen was taken before sshd bound it.
    pub async fn start() -> Self {
        let sshd =
            super::which("sshd").expect("sshd is installed (openssh-server; scripts/install-deps.sh installs it)");
        std::fs::create_dir_all("/run/sshd").expect("sshd's privilege separation folder /run/sshd can be made");
        let dir = tempfile::tempdir().unwrap();
        keygen(&dir.path().join("host_key"));
        keygen(&dir.path().join("client_key"));
        std::fs::copy(dir.path().join("client_key.pub"), dir.path().join("authorized_keys")).unwrap();
        for _ in 0..5 {
            let port = super::free_port();
            let config = dir.path().join("sshd_config");
            std::fs::write(&config, config_text(dir.path(), port)).unwrap();
            let mut child = Command::new(&sshd)
                .arg("-D")
                .arg("-E")
                .arg(dir.path().join("sshd.log"))
                .arg("-f")
                .arg(&config)
                .stdin(Stdio::null())
                .spawn()
                .expect("sshd starts");
            if answers(port, &mut child).await {
                return Self { port, child, dir };
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        let log = std::fs::read_to_string(dir.path().join("sshd.log")).unwrap_or_default();
        panic!("sshd did not start on a free port in 5 tries; its log:\n{log}");
    }

    /// `ssh://USER@127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("ssh://{}@127.0.0.1:{}", whoami(), self.port)
    }

    /// The private key the server accepts.
    pub fn client_key(&self) -> PathBuf {
        self.dir.path().join("client_key")
    }

    /// Another key the server accepts: RSA, its file enciphered with `passphrase`.
    pub fn rsa_client_key_with_passphrase(&self, passphrase: &str) -> PathBuf {
        let path = self.dir.path().join("rsa_client_key");
        let status = Command::new("ssh-keygen")
            .args(["-q", "-t", "rsa", "-b", "2048", "-N", passphrase, "-C", "stockguard-test", "-f"])
            .arg(&path)
            .stdout(Stdio::null())
            .status()
            .expect("ssh-keygen runs");
        assert!(status.success(), "ssh-keygen made {}", path.display());
        let public = std::fs::read_to_string(path.with_extension("pub")).unwrap();
        let authorized = self.dir.path().join("authorized_keys");
        let mut all = std::fs::read_to_string(&authorized).unwrap();
        all.push_str(&public);
        std::fs::write(&authorized, all).unwrap();
        path
    }

    /// A known_hosts file that trusts this server's host key, as `ssh-keyscan` would write it.
    pub fn known_hosts(&self) -> PathBuf {
        let path = self.dir.path().join("known_hosts");
        let public = std::fs::read_to_string(self.dir.path().join("host_key.pub")).unwrap();
        std::fs::write(&path, format!("[127.0.0.1]:{} {}", self.port, public)).unwrap();
        path
    }

    /// A known_hosts file that holds another key of the same kind for this server.
    pub fn known_hosts_with_another_key(&self) -> PathBuf {
        let other = self.dir.path().join("other_host_key");
        if !other.exists() {
            keygen(&other);
        }
        let path = self.dir.path().join("known_hosts_changed");
        let public = std::fs::read_to_string(other.with_extension("pub")).unwrap();
        std::fs::write(&path, format!("[127.0.0.1]:{} {}", self.port, public)).unwrap();
        path
    }

    /// A file in the server's folder (for a test's own empty known_hosts).
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    /// The SHA256 fingerprint of the server's host key, as `ssh-keygen -l` prints it.
    pub fn host_key_fingerprint(&self) -> String {
        let out = Command::new("ssh-keygen")
            .args(["-l", "-E", "sha256", "-f"])
            .arg(self.dir.path().join("host_key.pub"))
            .output()
            .expect("ssh-keygen -l runs");
        let line = String::from_utf8(out.stdout).unwrap();
        line.split_whitespace().nth(1).expect("ssh-keygen -l prints a fingerprint").to_string()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn config_text(dir: &Path, port: u16) -> String {
    let d = dir.display();
    format!(
        "Port {port}\n\
         ListenAddress 127.0.0.1\n\
         HostKey {d}/host_key\n\
         AuthorizedKeysFile {d}/authorized_keys\n\
         PidFile {d}/sshd.pid\n\
         StrictModes no\n\
         UsePAM no\n\
         PasswordAuthentication no\n\
         KbdInteractiveAuthentication no\n\
         PubkeyAuthentication yes\n\
         PermitRootLogin prohibit-password\n\
         AllowTcpForwarding yes\n\
         LogLevel DEBUG1\n"
    )
}

/// Whether the sshd started as `child` answers on `port` with an SSH banner (and is still
/// running: another process's server on a port taken under us would answer too).
async fn answers(port: u16, child: &mut Child) -> bool {
    for _ in 0..250 {
        if child.try_wait().ok().flatten().is_some() {
            return false;
        }
        if let Ok(mut socket) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            let mut banner = [0u8; 8];
            if socket.read_exact(&mut banner).await.is_ok() && banner.starts_with(b"SSH-2.0-") {
                return child.try_wait().ok().flatten().is_none();
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}
