//! `make demo` as a person runs it: in a terminal, stopped with Ctrl-C. The terminal is a real
//! pseudo-terminal (`script` from util-linux holds it), so Ctrl-C is the line discipline's
//! SIGINT to the foreground process group, exactly as a keyboard sends it.

use crate::support;

use std::io::{Read as _, Write as _};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sqlx::MySqlPool;

/// The processes whose environment carries `marker` (every process `make demo` starts
/// inherits it): `(pid, command line)`.
fn processes_with(marker: &str) -> Vec<(u32, String)> {
    let needle = format!("STOCKGUARD_KEY_PREFIX={marker}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else { continue };
        if environ.split(|b| *b == 0).any(|var| var == needle.as_bytes()) {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            found.push((pid, cmdline.trim().to_string()));
        }
    }
    found
}

/// A process's state letter and signal masks, from `/proc` (`R`, `S`, `T` stopped, `Z`).
fn state_of(pid: u32) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .filter(|l| ["State:", "SigIgn:", "SigCgt:", "PPid:"].iter().any(|k| l.starts_with(k)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Waits until `done` holds of what the terminal showed and the processes, or `limit` passes.
fn wait_for(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn ctrl_c_on_make_demo_in_a_terminal_leaves_no_process_of_it(pool: MySqlPool) {
    let redis = support::TestRedis::new("demo").await;
    let marker = redis.keys.prefix().to_string();
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = std::path::Path::new(env!("CARGO_BIN_EXE_stockguard")).parent().unwrap().parent().unwrap();
    let mut cmd = std::process::Command::new("script");
    // -q quiet, -e the command's exit status, -f flush as it comes; the typescript is discarded.
    cmd.args(["-qef", "-c", "make --no-print-directory demo", "/dev/null"]).current_dir(root);
    for k in support::PROFILE_OVERRIDES {
        cmd.env_remove(k);
    }
    cmd.env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env("STOCKGUARD_DEMO_NO_BUILD", "1")
        .env("CARGO_TARGET_DIR", target)
        .env("STOCKGUARD_CONFIG_DIR", dir.path().join("config"))
        .env("STOCKGUARD_SANDBOX_DIR", dir.path().join("sandbox"))
        .env("STOCKGUARD_MYSQL_URL", support::mysql_url_of(&pool).await)
        .env("STOCKGUARD_REDIS_URL", &redis.url)
        .env("STOCKGUARD_KEY_PREFIX", &marker)
        .env("STOCKGUARD_ENVIRONMENT", "sandbox")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // As a person's terminal has them: SIGINT and SIGQUIT at their defaults. A test run
    // started in the background of a script (CI's may be) inherits them ignored, and an
    // ignored disposition survives exec: Ctrl-C would then stop nothing, fix or no fix.
    // SAFETY: between fork and exec only signal(2), which is async-signal-safe, runs.
    unsafe {
        use std::os::unix::process::CommandExt as _;
        cmd.pre_exec(|| {
            use nix::sys::signal::{signal, SigHandler, Signal};
            for sig in [Signal::SIGINT, Signal::SIGQUIT] {
                signal(sig, SigHandler::SigDfl).map_err(std::io::Error::from)?;
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("script(1) from util-linux starts");
    let shown = Arc::new(Mutex::new(String::new()));
    let mut out = child.stdout.take().unwrap();
    let reader = {
        let shown = shown.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 {
                    break;
                }
                shown.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        })
    };
    let said = || shown.lock().unwrap().clone();

    // The demo is up: its table in the terminal, the engine and the buyers running.
    let running = |what: &str| processes_with(&marker).iter().any(|(_, cmd)| cmd.contains(what));
    wait_for(Duration::from_secs(180), "the demo's live table", || {
        said().contains("showing the live drift table") && running(" load ") && running("engine serve")
    });
    let before = processes_with(&marker);
    println!("before Ctrl-C: {before:#?}");

    child.stdin.as_mut().unwrap().write_all(b"\x03").unwrap();
    child.stdin.as_mut().unwrap().flush().unwrap();
    let ended = Instant::now() + Duration::from_secs(60);
    while !processes_with(&marker).is_empty() {
        assert!(
            Instant::now() < ended,
            "left running 60 s after Ctrl-C: {:#?}\nstates: {:?}\nthe terminal said:\n{}",
            processes_with(&marker),
            processes_with(&marker).iter().map(|(pid, _)| state_of(*pid)).collect::<Vec<_>>(),
            said()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = child.wait().unwrap();
    reader.join().unwrap();
    println!("make demo ended {status} after Ctrl-C; the terminal said:\n{}", said());
    assert!(processes_with(&marker).is_empty(), "left running: {:?}", processes_with(&marker));
    // The key prefix (the marker) lives until here; its keys go with it.
    drop(redis);
}
