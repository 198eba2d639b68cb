//! Servers that speak TLS, as managed Redis and MySQL do: certificates made by `openssl` in
//! the test's own folder, a private `redis-server` on a TLS port only (it asks every client
//! for a certificate), and a private `mariadbd` started with the same CA and an account that
//! must show a client certificate (`REQUIRE X509`).
//!
//! The certificates: a CA; a server certificate it signed for 127.0.0.1 and localhost (in the
//! subject alternative names, as a hostname check wants); a client certificate it signed; and
//! a second, "wrong" CA with a server and a client certificate of its own, which the first CA
//! did not sign.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use stockguard_core::profile::{CertFiles, MysqlTls, SslMode, Tls};

use super::mariadb_server::MariadbServer;

/// The test's certificates, in a folder of its own (removed when dropped).
pub struct Certs {
    dir: tempfile::TempDir,
}

impl Certs {
    /// Makes the two CAs and their certificates with `openssl` (P-256 keys: quick to make).
    pub fn make() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let certs = Self { dir };
        certs.ca("ca");
        certs.ca("wrong_ca");
        certs.leaf("server", "ca");
        certs.leaf("client", "ca");
        certs.leaf("rogue_server", "wrong_ca");
        certs.leaf("rogue_client", "wrong_ca");
        certs
    }

    /// `NAME.pem` or `NAME.key` in the folder, as a string (for profiles and flags).
    pub fn file(&self, name: &str) -> String {
        self.dir.path().join(name).to_string_lossy().into_owned()
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The CA pinned, our client certificate shown: Redis's TLS, and MySQL's files.
    pub fn redis(&self) -> CertFiles {
        CertFiles {
            ca: Some(self.file("ca.pem")),
            cert: Some(self.file("client.pem")),
            key: Some(self.file("client.key")),
        }
    }

    /// MySQL in `VERIFY_IDENTITY`, the CA pinned, our client certificate shown.
    pub fn mysql(&self) -> MysqlTls {
        MysqlTls { ssl_mode: Some(SslMode::VerifyIdentity), files: self.redis() }
    }

    /// Both, mutual TLS with pinned CAs.
    pub fn tls(&self) -> Tls {
        Tls { redis: self.redis(), mysql: self.mysql() }
    }

    fn openssl(&self, args: &[&str]) {
        let out = Command::new("openssl").args(args).current_dir(self.dir.path()).output().unwrap_or_else(|e| {
            panic!("openssl must be installed to make the TLS tests' certificates (`make deps` installs it): {e}")
        });
        assert!(out.status.success(), "openssl {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    }

    /// A CA: a self-signed certificate.
    fn ca(&self, name: &str) {
        let subject = format!("/CN=stockguard test {name}");
        self.new_key(name, &["-x509", "-out", &format!("{name}.pem"), "-days", "2", "-subj", &subject]);
    }

    /// A certificate for 127.0.0.1 and localhost, signed by the CA `ca`.
    fn leaf(&self, name: &str, ca: &str) {
        let (csr, pem, ext) = (format!("{name}.csr"), format!("{name}.pem"), format!("{name}.ext"));
        self.new_key(name, &["-out", &csr, "-subj", &format!("/CN={name}")]);
        std::fs::write(
            self.dir.path().join(&ext),
            "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n\
             extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
        )
        .unwrap();
        let (ca_pem, ca_key) = (format!("{ca}.pem"), format!("{ca}.key"));
        #[rustfmt::skip]
        self.openssl(&[
            "x509", "-req", "-in", &csr, "-CA", &ca_pem, "-CAkey", &ca_key, "-CAcreateserial",
            "-out", &pem, "-days", "2", "-extfile", &ext,
        ]);
    }

    /// `openssl req` making the P-256 key `name.key` (quick to make), with `args` after.
    fn new_key(&self, name: &str, args: &[&str]) {
        let key = format!("{name}.key");
        #[rustfmt::skip]
        let new = ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", &key];
        self.openssl(&[&new[..], args].concat());
    }
}

/// A `redis-server` that speaks TLS only, on a free loopback port, with the certificate
/// `server` (`server` or `rogue_server`) and every client asked for one the CA signed.
pub struct TlsRedis {
    pub port: u16,
    child: Child,
    _dir: tempfile::TempDir,
}

impl TlsRedis {
    pub async fn start(certs: &Certs, server: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = super::free_port();
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", "0", "--tls-port", &port.to_string()])
            .args(["--tls-cert-file", &certs.file(&format!("{server}.pem"))])
            .args(["--tls-key-file", &certs.file(&format!("{server}.key"))])
            .args(["--tls-ca-cert-file", &certs.file("ca.pem"), "--tls-auth-clients", "yes"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("redis-server (with TLS) must be installed (`make deps` installs it): {e}"));
        wait_listening(port, "redis-server").await;
        Self { port, child, _dir: dir }
    }

    pub fn url(&self) -> String {
        format!("rediss://127.0.0.1:{}/", self.port)
    }
}

impl Drop for TlsRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A private `mariadbd` with the CA and server certificate of `certs`, a database `sale`, and
/// an account `tls` that must show a client certificate the CA signed.
pub struct TlsMariadb {
    pub server: MariadbServer,
}

impl TlsMariadb {
    pub async fn start(certs: &Certs) -> Self {
        let (ca, cert, key) = (certs.file("ca.pem"), certs.file("server.pem"), certs.file("server.key"));
        let server = MariadbServer::start(&[
            &format!("--ssl-ca={ca}"),
            &format!("--ssl-cert={cert}"),
            &format!("--ssl-key={key}"),
        ])
        .await;
        let root = sqlx::MySqlPool::connect(&server.url("root", "mysql")).await.unwrap();
        for sql in [
            "CREATE DATABASE sale",
            "CREATE USER 'tls'@'%' REQUIRE X509",
            "GRANT ALL ON *.* TO 'tls'@'%' WITH GRANT OPTION",
        ] {
            sqlx::query(sql).execute(&root).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        root.close().await;
        Self { server }
    }

    /// The sale's database as the account that must show a client certificate.
    pub fn url(&self) -> String {
        self.server.url("tls", "sale")
    }
}

/// Waits until something listens on the loopback `port` (the server's TLS port takes no
/// plain `PING`).
async fn wait_listening(port: u16, what: &str) {
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{what} on port {port} did not listen within 5 s");
}

/// A path that names no file, for the refusals of a missing one.
pub fn nowhere(certs: &Certs) -> PathBuf {
    certs.dir().join("missing.pem")
}

/// A Redis Cluster of three masters (no replicas) that speaks TLS only, its cluster bus too
/// (`--tls-cluster yes`), every client asked for a certificate the CA signed. Joined by
/// `redis-cli --cluster create` over TLS; ready once every node says `cluster_state:ok`.
pub struct TlsCluster {
    pub ports: Vec<u16>,
    children: Vec<Child>,
    _dir: tempfile::TempDir,
}

impl TlsCluster {
    pub async fn start(certs: &Certs) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut cluster = Self { ports: Vec::new(), children: Vec::new(), _dir: tempfile::tempdir().unwrap() };
        for i in 0..3 {
            let (port, bus) = (super::free_port(), super::free_port());
            let node_dir = dir.path().join(format!("node-{i}"));
            std::fs::create_dir_all(&node_dir).unwrap();
            let child = Command::new("redis-server")
                .args(["--bind", "127.0.0.1", "--port", "0", "--tls-port", &port.to_string()])
                .args(["--tls-cluster", "yes", "--tls-replication", "yes"])
                .args(["--tls-cert-file", &certs.file("server.pem"), "--tls-key-file", &certs.file("server.key")])
                .args(["--tls-ca-cert-file", &certs.file("ca.pem"), "--tls-auth-clients", "yes"])
                .args(["--cluster-enabled", "yes", "--cluster-port", &bus.to_string()])
                .args(["--cluster-config-file", "nodes.conf", "--save", "", "--appendonly", "no"])
                .args(["--daemonize", "no", "--dir"])
                .arg(&node_dir)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("redis-server (with TLS) must be installed (`make deps` installs it): {e}"));
            cluster.children.push(child);
            cluster.ports.push(port);
            wait_listening(port, "redis-server (TLS cluster node)").await;
        }
        let nodes: Vec<String> = cluster.ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
        let out = cluster
            .cli(certs)
            .args(["--cluster", "create"])
            .args(&nodes)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .unwrap_or_else(|e| panic!("redis-cli must be installed (`make deps` installs redis-server): {e}"));
        assert!(out.status.success(), "redis-cli --cluster create: {}", String::from_utf8_lossy(&out.stdout));
        for _ in 0..200 {
            let ok = cluster.ports.iter().all(|p| {
                let out = cluster.cli(certs).args(["-p", &p.to_string(), "cluster", "info"]).output().unwrap();
                String::from_utf8_lossy(&out.stdout).contains("cluster_state:ok")
            });
            if ok {
                cluster._dir = dir;
                return cluster;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the TLS cluster on ports {:?} did not say cluster_state:ok within 10 s", cluster.ports);
    }

    /// `redis-cli` over TLS with the CA and the client certificate.
    fn cli(&self, certs: &Certs) -> Command {
        let mut cmd = Command::new("redis-cli");
        cmd.args(["--tls", "--cacert", &certs.file("ca.pem")]).args([
            "--cert",
            &certs.file("client.pem"),
            "--key",
            &certs.file("client.key"),
        ]);
        cmd
    }

    /// The seed list, every node: a cluster's `rediss://` URL.
    pub fn url(&self) -> String {
        self.ports.iter().map(|p| format!("rediss://127.0.0.1:{p}/")).collect::<Vec<_>>().join(",")
    }
}

impl Drop for TlsCluster {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
