//! The app's log file: what the core and this shell trace (`tracing`), one file a day in the
//! OS log folder of the app (on Linux `~/.local/share/dev.stockguard.console/logs`), the last
//! week kept. An on-call engineer asked "what did the console do at 02:14?" finds it there.
//!
//! `STOCKGUARD_LOG` filters as it does for the CLI; `STOCKGUARD_LOG_DIR` moves the folder
//! (the end-to-end test reads the log from a folder of its own).

use std::path::PathBuf;

use tauri::Manager as _;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{Builder, Rotation};
use tracing_subscriber::EnvFilter;

/// Files of older days beyond this many are deleted at rotation.
const DAYS_KEPT: usize = 7;

/// What the log holds unless `STOCKGUARD_LOG` says otherwise: our own crates from `info`
/// (connections, rewrites, exits, the sampler's failures), the rest from `warn`.
const DEFAULT_FILTER: &str = "warn,stockguard_core=info,stockguard_desktop=info,sqlx=error";

/// Where the log goes and the guard that flushes it; keep the guard for the app's lifetime.
pub struct LogFile {
    pub dir: PathBuf,
    _flush_on_drop: WorkerGuard,
}

/// Starts writing the log. Fails only when the folder cannot be made; the app then runs
/// without a file log and says so on standard error.
pub fn init(app: &tauri::AppHandle) -> Result<LogFile, String> {
    let dir = match std::env::var_os("STOCKGUARD_LOG_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => app.path().app_log_dir().map_err(|e| format!("no log folder for this user: {e}"))?,
    };
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let appender = Builder::new()
        .rotation(Rotation::DAILY)
        .filename_prefix("stockguard-desktop")
        .filename_suffix("log")
        .max_log_files(DAYS_KEPT)
        .build(&dir)
        .map_err(|e| format!("cannot write the log in {}: {e}", dir.display()))?;
    // Writing happens on a thread of its own, so a slow disk never stalls a command.
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter = EnvFilter::try_from_env("STOCKGUARD_LOG").unwrap_or_else(|_| DEFAULT_FILTER.into());
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer).with_ansi(false).init();
    Ok(LogFile { dir, _flush_on_drop: guard })
}
