//! The app under test, watched. WebKitWebDriver starts the app itself, as a grandchild of the
//! test, so the test points it at a launcher of its own: a script that writes the app's pid and
//! then becomes the app with its stderr kept in a file. Then:
//!
//! - every wait of a scenario ([`until`]) ends at once when the app is gone, with the app's
//!   last words on stderr, instead of waiting out its time (or for ever: a WebDriver command
//!   to a window that died may never be answered);
//! - a watchdog stops tauri-driver as soon as the app is gone, so a WebDriver command already
//!   waiting returns, and any failure after that says the app's words ([`install_panic_note`]);
//! - a start that failed (the app gone before its window said its first words, as with
//!   "Failed to initialize GTK") is tried once more (`super::open_app_with`).

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How many of the app's last stderr lines a failure quotes.
const LAST_WORDS: usize = 30;

/// An app started (by WebKitWebDriver) through [`AppProcess::launcher`].
pub struct AppProcess {
    dir: tempfile::TempDir,
    /// The program to give WebDriver as the application.
    pub launcher: PathBuf,
}

/// Why a wait ended without what it waited for.
#[derive(Debug, thiserror::Error)]
pub enum Stopped {
    #[error("the app (pid {pid}) is gone; its last words on stderr:\n{words}")]
    AppGone { pid: i32, words: String },
    #[error("{what}: not within {within:?}")]
    TimedOut { what: String, within: Duration },
}

impl AppProcess {
    /// A launcher for `binary` that records its pid and stderr in a folder of its own.
    pub fn new(binary: &Path) -> Self {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("a folder for the app's pid and stderr");
        let launcher = dir.path().join("launch-app");
        let quote = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', r"'\''"));
        let script = format!(
            "#!/bin/sh\necho $$ > {pid}\nexec {app} \"$@\" 2>> {stderr}\n",
            pid = quote(&dir.path().join("pid")),
            app = quote(binary),
            stderr = quote(&dir.path().join("stderr")),
        );
        std::fs::write(&launcher, script).expect("the launcher is written");
        std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).expect("the launcher runs");
        Self { dir, launcher }
    }

    /// The app's pid, once it started.
    pub fn pid(&self) -> Option<i32> {
        std::fs::read_to_string(self.dir.path().join("pid")).ok()?.trim().parse().ok()
    }

    /// The app's last lines on stderr.
    pub fn last_words(&self) -> String {
        let text = std::fs::read_to_string(self.dir.path().join("stderr")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let words = lines[lines.len().saturating_sub(LAST_WORDS)..].join("\n");
        if words.is_empty() {
            "(nothing)".to_string()
        } else {
            words
        }
    }

    /// `Err` with the app's last words once it started and is gone: exited, or a zombie its
    /// parent has not reaped yet.
    pub fn check(&self) -> Result<(), Stopped> {
        let Some(pid) = self.pid() else { return Ok(()) };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // `pid (comm) S ...`: the state follows the last `)`.
        let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next());
        match state {
            Some('Z' | 'X') | None => Err(Stopped::AppGone { pid, words: self.last_words() }),
            Some(_) => Ok(()),
        }
    }
}

/// Asks `probe` every 200 ms until it gives a value, the app is gone, or `within` passes.
pub async fn until<T, F, Fut>(
    app: Option<&AppProcess>,
    what: &str,
    within: Duration,
    mut probe: F,
) -> Result<T, Stopped>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Some(app) = app {
            app.check()?;
        }
        if let Some(value) = probe().await {
            return Ok(value);
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Stopped::TimedOut { what: what.to_string(), within });
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The app of the scenario running now (one window at a time).
static CURRENT: Mutex<Option<Arc<AppProcess>>> = Mutex::new(None);

/// Makes `app` the one [`check_current`] and the panic note look at.
pub fn watch(app: &Arc<AppProcess>) {
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = Some(app.clone());
}

/// Forgets `app`, if it is the one watched.
pub fn unwatch(app: &Arc<AppProcess>) {
    let mut current = CURRENT.lock().unwrap_or_else(|e| e.into_inner());
    if current.as_ref().is_some_and(|c| Arc::ptr_eq(c, app)) {
        *current = None;
    }
}

/// The app watched now, if any.
pub fn current() -> Option<Arc<AppProcess>> {
    CURRENT.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Fails the scenario, in the app's words, when the app watched now is gone.
pub fn check_current() {
    if let Some(app) = current() {
        if let Err(gone) = app.check() {
            panic!("{gone}");
        }
    }
}

/// Every failure of a scenario whose app is gone also says the app's last words (a WebDriver
/// call that failed because the window died says only that the connection closed).
pub fn install_panic_note() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Some(Err(gone)) = current().map(|app| app.check()) {
                eprintln!("{gone}");
            }
            previous(info);
        }));
    });
}

/// Stops `driver_pid` (tauri-driver) as soon as `app` is gone, until `stop` is set.
pub fn spawn_watchdog(
    app: Arc<AppProcess>,
    driver_pid: u32,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            if app.check().is_err() {
                let pid = nix::unistd::Pid::from_raw(driver_pid as i32);
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    })
}

/// A program that says what an app without a display says, counts its starts in `starts`, and
/// exits.
fn an_app_that_cannot_start(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let binary = dir.join("fake-app");
    let starts = dir.join("starts");
    std::fs::write(
        &binary,
        format!(
            "#!/bin/sh\necho started >> '{}'\necho 'Gtk: cannot open display: :99' >&2\n\
             echo 'Failed to initialize GTK' >&2\nexit 1\n",
            starts.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    binary
}

#[tokio::test]
async fn a_wait_on_an_app_that_exits_at_once_ends_within_seconds_in_its_own_words() {
    let fake = tempfile::tempdir().unwrap();
    let app = AppProcess::new(&an_app_that_cannot_start(fake.path()));
    // Started and left unreaped, as WebKitWebDriver may leave it: a zombie is gone too.
    let mut child = std::process::Command::new(&app.launcher).spawn().expect("the launcher starts");

    let started = std::time::Instant::now();
    let outcome: Result<(), Stopped> =
        until(Some(&app), "the window's first words", Duration::from_secs(600), || async { None }).await;
    let took = started.elapsed();

    let said = outcome.expect_err("the wait ends when the app is gone").to_string();
    assert!(took < Duration::from_secs(10), "the wait took {took:?}");
    assert!(said.contains("Failed to initialize GTK") && said.contains("cannot open display"), "{said}");
    assert!(said.contains(&format!("pid {}", child.id())), "{said}");
    child.wait().unwrap();
}

#[tokio::test]
async fn an_app_that_cannot_start_is_started_once_more_then_fails_within_a_minute_in_its_own_words() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let _one_window = super::one_window_at_a_time().await;
    let fake = tempfile::tempdir().unwrap();
    let binary = an_app_that_cannot_start(fake.path());

    let started = std::time::Instant::now();
    let outcome = super::start_app_twice(&binary, &[]).await;
    let took = started.elapsed();

    let said = match outcome {
        Ok(_) => panic!("a session opened on an app that exits at once"),
        Err(said) => said,
    };
    assert!(took < Duration::from_secs(60), "the two starts took {took:?}: {said}");
    assert_eq!(said.matches("Failed to initialize GTK").count(), 2, "both starts, in the app's words: {said}");
    let starts = std::fs::read_to_string(fake.path().join("starts")).unwrap_or_default();
    assert_eq!(starts.lines().count(), 2, "started twice: {starts:?}");
}
