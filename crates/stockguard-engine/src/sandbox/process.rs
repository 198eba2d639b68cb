//! Private server processes for the sandbox: the system's `mariadbd` and `redis-server`,
//! on free loopback ports, with their data under the sandbox folder.
//!
//! They are started in their own process group so that they outlive the CLI invocation that
//! started them and a Ctrl-C in the terminal does not reach them; `sandbox down` stops them.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::state::StartedServer;
use super::{io_err, SandboxError};

/// Asks the OS for a free loopback port. The port is free when this returns; the server is
/// started right after, so the window for another process to take it is small.
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Finds a binary on PATH or in the sbin folders, where Debian puts `mariadbd`.
pub fn find_binary(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin", "/usr/bin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

pub(crate) fn spawn_detached(mut cmd: Command, log: &Path, what: &'static str) -> Result<u32, SandboxError> {
    use std::os::unix::process::CommandExt as _;
    let log_file = std::fs::OpenOptions::new().create(true).append(true).open(log).map_err(io_err(log))?;
    let err_file = log_file.try_clone().map_err(io_err(log))?;
    let child = cmd
        .stdin(Stdio::null())
        .stdout(log_file)
        .stderr(err_file)
        .process_group(0)
        .spawn()
        .map_err(|e| SandboxError::StartFailed { what, reason: e.to_string(), log: log.display().to_string() })?;
    Ok(child.id())
}

/// How many times [`spawn_listening`] starts a server on fresh ports before it gives up.
const PORT_TRIES: usize = 3;

/// Starts a server on `ports` ports picked free just before (`build` makes its command from
/// them; the first is the one it listens on) and waits up to `secs` until it accepts
/// connections. A server that exits before it listens is started again on new ports, three
/// tries in all: a port free when picked can be taken before the server binds it, since a
/// picked port and the source port of any outgoing connection on the machine come from one
/// ephemeral range (the likely reason a cluster node on a loaded CI machine never listened).
/// Returns the pid and the ports it runs on.
pub(crate) async fn spawn_listening(
    what: &'static str,
    log: &Path,
    ports: usize,
    secs: u64,
    build: impl Fn(&[u16]) -> Command,
) -> Result<(u32, Vec<u16>), SandboxError> {
    let mut tries = 0;
    loop {
        tries += 1;
        let picked = (0..ports).map(|_| free_port()).collect::<std::io::Result<Vec<u16>>>().map_err(io_err(log))?;
        let pid = spawn_detached(build(&picked), log, what)?;
        match wait_for_port(picked[0], pid, what, log, secs).await {
            Ok(()) => return Ok((pid, picked)),
            Err(SandboxError::StartFailed { .. }) if tries < PORT_TRIES => {
                tracing::warn!(
                    "{what} exited before listening on port {} (try {tries} of {PORT_TRIES}); trying new ports",
                    picked[0]
                );
            }
            Err(e) => return Err(e),
        }
    }
}

/// Waits until something accepts TCP connections on the port, or the process dies.
pub(crate) async fn wait_for_port(
    port: u16,
    pid: u32,
    what: &'static str,
    log: &Path,
    secs: u64,
) -> Result<(), SandboxError> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    while tokio::time::Instant::now() < deadline {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return Ok(());
        }
        // Reap it if it is our own child that exited: a zombie still looks alive, and the
        // wait would run its whole time and say "not ready" instead of "exited".
        let _ =
            nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid as i32), Some(nix::sys::wait::WaitPidFlag::WNOHANG));
        if !is_alive(pid) {
            return Err(SandboxError::StartFailed {
                what,
                reason: "the process exited".into(),
                log: log.display().to_string(),
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(SandboxError::NotReady { what, secs, log: log.display().to_string() })
}

/// Initialises (first time only) and starts a private MariaDB whose root has no password.
pub async fn start_mariadb(sandbox_dir: &Path) -> Result<StartedServer, SandboxError> {
    let mariadbd = find_binary("mariadbd").ok_or(SandboxError::BinaryMissing("mariadbd"))?;
    let data_dir = std::path::absolute(sandbox_dir.join("mysql")).map_err(io_err(sandbox_dir))?;
    let log = std::path::absolute(sandbox_dir.join("mysql.log")).map_err(io_err(sandbox_dir))?;
    std::fs::create_dir_all(&data_dir).map_err(io_err(&data_dir))?;
    let user = if is_root() { "root".to_string() } else { std::env::var("USER").unwrap_or_default() };

    if !data_dir.join("mysql").is_dir() {
        let install = find_binary("mariadb-install-db").ok_or(SandboxError::BinaryMissing("mariadb-install-db"))?;
        let out = Command::new(install)
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data_dir.display()))
            .arg(format!("--user={user}"))
            .arg("--auth-root-authentication-method=normal")
            .arg("--skip-test-db")
            .output()
            .map_err(|e| SandboxError::StartFailed {
                what: "mariadb-install-db",
                reason: e.to_string(),
                log: String::new(),
            })?;
        std::fs::write(&log, [&out.stdout[..], &out.stderr[..]].concat()).map_err(io_err(&log))?;
        if !out.status.success() {
            return Err(SandboxError::StartFailed {
                what: "mariadb-install-db",
                reason: format!("exit status {}", out.status),
                log: log.display().to_string(),
            });
        }
    }

    let (pid, ports) = spawn_listening("mariadbd", &log, 1, 60, |ports| {
        let mut cmd = Command::new(&mariadbd);
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", data_dir.display()))
            .arg(format!("--port={}", ports[0]))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--socket={}", data_dir.join("mysqld.sock").display()))
            .arg(format!("--pid-file={}", data_dir.join("mysqld.pid").display()))
            .arg(format!("--user={user}"))
            .arg("--max-connections=500")
            .arg("--innodb-buffer-pool-size=256M");
        cmd
    })
    .await?;
    Ok(StartedServer { pid, port: ports[0], data_dir, log })
}

/// Starts a private Redis that keeps nothing on disk.
pub async fn start_redis(sandbox_dir: &Path) -> Result<StartedServer, SandboxError> {
    let binary = find_binary("redis-server").ok_or(SandboxError::BinaryMissing("redis-server"))?;
    let data_dir = std::path::absolute(sandbox_dir.join("redis")).map_err(io_err(sandbox_dir))?;
    let log = std::path::absolute(sandbox_dir.join("redis.log")).map_err(io_err(sandbox_dir))?;
    std::fs::create_dir_all(&data_dir).map_err(io_err(&data_dir))?;
    let (pid, ports) = spawn_listening("redis-server", &log, 1, 20, |ports| {
        let mut cmd = Command::new(&binary);
        cmd.args(["--bind", "127.0.0.1", "--port", &ports[0].to_string(), "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&data_dir)
            .args(["--daemonize", "no"]);
        cmd
    })
    .await?;
    Ok(StartedServer { pid, port: ports[0], data_dir, log })
}

/// True when a process with this pid exists.
pub fn is_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else { return false };
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
}

/// True when the pid is still the server we started: alive, and (on Linux) its command line
/// names our data folder. Guards `down` against a pid reused by an unrelated process.
pub fn is_ours(server: &StartedServer) -> bool {
    if !is_alive(server.pid) {
        return false;
    }
    match std::fs::read(format!("/proc/{}/cmdline", server.pid)) {
        Ok(cmdline) => {
            let cmdline = String::from_utf8_lossy(&cmdline);
            // mariadbd keeps its `--datadir=...` argument; redis-server rewrites its title to
            // `redis-server 127.0.0.1:PORT`.
            cmdline.contains(&*server.data_dir.to_string_lossy())
                || cmdline.contains(&format!("127.0.0.1:{}", server.port))
        }
        Err(_) => !Path::new("/proc").is_dir(),
    }
}

/// Stops a server we started: SIGTERM, then waits up to 30 s for it to exit.
pub async fn stop(server: &StartedServer) -> Result<bool, SandboxError> {
    if !is_ours(server) {
        return Ok(false);
    }
    let pid = nix::unistd::Pid::from_raw(server.pid as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM)
        .map_err(|e| SandboxError::Stop { pid: server.pid, reason: e.to_string() })?;
    for _ in 0..300 {
        // Reap it if it is our own child (a test that started and stops it in one process);
        // otherwise it would linger as a zombie and still look alive.
        let _ = nix::sys::wait::waitpid(pid, Some(nix::sys::wait::WaitPidFlag::WNOHANG));
        if !is_alive(server.pid) {
            return Ok(true);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(SandboxError::Stop { pid: server.pid, reason: "still running 30 s after SIGTERM".into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_server_that_exits_at_once_is_reported_as_exited_without_waiting_out_its_time() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("exits.log");
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "exit 3"]);
        let pid = spawn_detached(cmd, &log, "a shell that exits").unwrap();
        let port = free_port().unwrap();
        let started = std::time::Instant::now();
        let err = wait_for_port(port, pid, "a shell that exits", &log, 20).await.unwrap_err();
        assert!(matches!(err, SandboxError::StartFailed { .. }), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(20), "it waited out its time: {err:?}");
    }

    #[tokio::test]
    async fn a_server_whose_port_was_taken_before_it_bound_it_is_started_on_new_ports() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("redis.log");
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let taken_port = taken.local_addr().unwrap().port();
        let redis = find_binary("redis-server").expect("redis-server is installed (make test installs it)");
        let tries = std::cell::Cell::new(0);
        let (pid, ports) = spawn_listening("redis-server", &log, 1, 20, |ports| {
            tries.set(tries.get() + 1);
            // The first try is handed the port someone else holds, as a race would.
            let port = if tries.get() == 1 { taken_port } else { ports[0] };
            let mut cmd = Command::new(&redis);
            cmd.args(["--bind", "127.0.0.1", "--port", &port.to_string(), "--save", "", "--appendonly", "no"])
                .arg("--dir")
                .arg(dir.path());
            cmd
        })
        .await
        .expect("the second try starts");
        let server = StartedServer { pid, port: ports[0], data_dir: dir.path().to_path_buf(), log: log.clone() };
        assert_eq!(tries.get(), 2);
        assert_ne!(ports[0], taken_port);
        assert!(std::fs::read_to_string(&log).unwrap().contains("Address already in use"));
        assert!(stop(&server).await.unwrap(), "the server on the new port was ours and stopped");
    }
}
