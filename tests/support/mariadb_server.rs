//! A private `mariadbd` for tests that need a server setting the shared one does not have
//! (binary logging). Its data lives in a temporary folder; it is killed when dropped.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct MariadbServer {
    pub port: u16,
    child: Child,
    _dir: tempfile::TempDir,
}

fn binary(name: &str) -> String {
    ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"]
        .iter()
        .map(|d| format!("{d}/{name}"))
        .find(|p| std::path::Path::new(p).is_file())
        .unwrap_or_else(|| panic!("{name} must be installed (`make test` installs mariadb-server)"))
}

impl MariadbServer {
    /// A fresh server (root without a password) started with `args` added.
    pub async fn start(args: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        // Temporary tables in a folder of its own: servers bootstrapped at once in the shared
        // /tmp lost theirs ("Could not remove temporary table", then "Unknown table").
        let tmp = dir.path().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let user = if nix::unistd::geteuid().is_root() { "root".to_string() } else { std::env::var("USER").unwrap() };
        let out = Command::new(binary("mariadb-install-db"))
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--user={user}"))
            .arg("--auth-root-authentication-method=normal")
            .arg("--skip-test-db")
            .arg(format!("--tmpdir={}", tmp.display()))
            .output()
            .unwrap();
        assert!(out.status.success(), "mariadb-install-db: {}", String::from_utf8_lossy(&out.stderr));
        let port = super::free_port();
        let child = Command::new(binary("mariadbd"))
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--port={port}"))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--socket={}", dir.path().join("s.sock").display()))
            .arg(format!("--user={user}"))
            .arg(format!("--tmpdir={}", tmp.display()))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = Self { port, child, _dir: dir };
        for _ in 0..600 {
            if sqlx::MySqlPool::connect(&server.url("root", "mysql")).await.is_ok() {
                return server;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the private mariadbd on port {port} did not answer within 30 s");
    }

    pub fn url(&self, user: &str, db: &str) -> String {
        format!("mysql://{user}@127.0.0.1:{}/{db}", self.port)
    }
}

impl Drop for MariadbServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
