//! The processes the drill runner starts (engines, consumers, the failover drill's Redis):
//! each dies with the runner, and a server gets a loopback port no outgoing connection of
//! the drill's load can take first. Used by [`super::rig`] and [`super::failover`].

use tokio::process::Command;

use super::RunnerError;
use crate::sandbox::process::free_port;

/// A runner killed with SIGKILL runs no destructor (`kill_on_drop` does nothing then): the
/// kernel stops the runner's processes instead, so a dead runner leaves no engine or server
/// behind (its faults end with their lease).
pub(super) fn dies_with_runner(cmd: &mut Command) {
    #[cfg(target_os = "linux")]
    // SAFETY: between fork and exec only the async-signal-safe prctl(2) call runs.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL).map_err(std::io::Error::from)
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// A free loopback port for a server the runner starts, below Linux's ephemeral range
/// (32768-60999 by default): a port from that range, free when asked, can be taken by any
/// outgoing connection before the server binds it, and the drill's load opens many.
pub(super) fn server_port() -> Result<u16, RunnerError> {
    for _ in 0..200 {
        let port = 20_000 + rand::random::<u16>() % 12_000;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    Ok(free_port()?)
}
