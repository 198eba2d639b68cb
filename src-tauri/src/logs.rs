//! The app's log file: what the core and this shell trace (`tracing`), one file a day in the
//! OS log folder of the app (on Linux `~/.local/share/dev.stockguard.console/logs`), the last
//! week kept, each day's file capped in size. An on-call engineer asked "what did the console
//! do at 02:14?" finds it there.
//!
//! `STOCKGUARD_LOG` filters as it does for the CLI; `STOCKGUARD_LOG_DIR` moves the folder
//! (the end-to-end test reads the log from a folder of its own).

use std::io::Write;
use std::path::PathBuf;

use tauri::Manager as _;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{Builder, Rotation};
use tracing_subscriber::EnvFilter;

/// Files of older days beyond this many are deleted at rotation.
const DAYS_KEPT: usize = 7;

/// A day's file stops growing at this size. Rotation by day alone bounds the count of files,
/// not their size: the board logs every failed sampler tick (once a second through an outage
/// of Redis), and a `STOCKGUARD_LOG=trace` left on writes far more. With the cap the folder
/// holds at most a week of this, and the first hours of a bad night, which say most, are kept.
const DAY_CAP_BYTES: u64 = 64 * 1024 * 1024;

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
    let today = chrono::Utc::now().date_naive();
    // The file tracing-appender writes today (it names days in UTC): a restart goes on counting.
    let written = std::fs::metadata(dir.join(format!("stockguard-desktop.{}.log", today.format("%Y-%m-%d"))))
        .map(|m| m.len())
        .unwrap_or(0);
    let capped = DayCapped { inner: appender, cap: DAY_CAP_BYTES, day: today, written, noted: false };
    // Writing happens on a thread of its own, so a slow disk never stalls a command.
    let (writer, guard) = tracing_appender::non_blocking(capped);
    let filter = EnvFilter::try_from_env("STOCKGUARD_LOG").unwrap_or_else(|_| DEFAULT_FILTER.into());
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer).with_ansi(false).init();
    Ok(LogFile { dir, _flush_on_drop: guard })
}

/// The daily file, writing each event whole until the day's file holds `cap` bytes, then one
/// line saying so and nothing more until the next (UTC) day, when the appender opens a new file.
struct DayCapped<W> {
    inner: W,
    cap: u64,
    day: chrono::NaiveDate,
    written: u64,
    noted: bool,
}

impl<W: Write> DayCapped<W> {
    fn write_on(&mut self, today: chrono::NaiveDate, event: &[u8]) -> std::io::Result<usize> {
        if today != self.day {
            (self.day, self.written, self.noted) = (today, 0, false);
        }
        if self.written + event.len() as u64 <= self.cap {
            self.inner.write_all(event)?;
            self.written += event.len() as u64;
        } else if !self.noted {
            self.noted = true;
            let note = format!(
                "stockguard-desktop: this day's log reached {} MiB; nothing more is written until the next day (UTC)\n",
                self.cap / (1024 * 1024)
            );
            self.inner.write_all(note.as_bytes())?;
        }
        // A dropped event is still "written": the logger must not retry it or fail.
        Ok(event.len())
    }
}

impl<W: Write> Write for DayCapped<W> {
    fn write(&mut self, event: &[u8]) -> std::io::Result<usize> {
        self.write_on(chrono::Utc::now().date_naive(), event)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(d: u32) -> chrono::NaiveDate {
        chrono::NaiveDate::from_ymd_opt(2026, 12, d).unwrap()
    }

    #[test]
    fn a_day_past_its_cap_writes_one_notice_and_the_next_day_writes_again() {
        let mut log = DayCapped { inner: Vec::new(), cap: 20, day: day(1), written: 0, noted: false };
        log.write_on(day(1), b"first event\n").unwrap();
        assert_eq!(log.write_on(day(1), b"second event\n").unwrap(), 13, "a dropped event is reported written");
        log.write_on(day(1), b"third event\n").unwrap();
        let text = String::from_utf8(log.inner.clone()).unwrap();
        assert!(text.starts_with("first event\n"), "{text}");
        assert_eq!(text.matches("reached").count(), 1, "one notice, then silence: {text}");
        assert!(!text.contains("second") && !text.contains("third"), "{text}");

        log.write_on(day(2), b"next day\n").unwrap();
        assert!(String::from_utf8(log.inner).unwrap().ends_with("until the next day (UTC)\nnext day\n"));
    }
}
