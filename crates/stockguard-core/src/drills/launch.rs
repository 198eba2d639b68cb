//! Starting a drill from a console that does not link the runner.
//!
//! The runner is the engine crate's, and a console (the desktop app) must not compile a sale
//! engine. So a console starts a drill the way a person would: it runs the `stockguard`
//! binary, `stockguard drill run NAME [--short F] [--extra-db-latency-ms N]`, with the
//! connection's settings in the environment (never a profile name: the child would resolve
//! it on its own and could land elsewhere). From then on the run lives in the database:
//! [`start`] returns once the runner has written its `drill_runs` row, and whoever watches it
//! reads that row and its timeline, never the process.
//!
//! - [`refusal`]: whether this connection may start drills at all (production never; staging
//!   only when said out loud; read-only profiles and looking roles never), so a window can
//!   disable its button with the reason before anything is spawned. The runner refuses the
//!   same cases again on its side.
//! - [`runner_binary`]: where the `stockguard` binary is: `STOCKGUARD_BIN`, else beside the
//!   console's own executable (as `cargo build` and the packages place them).
//! - [`runner_command`]: the exact command line and environment, testable without spawning.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use secrecy::ExposeSecret as _;
use serde::Serialize;
use sqlx::MySqlPool;

use super::plan::{Plan, PlanError};
use super::runs::DrillRunError;
use crate::action::{Action, Refused};
use crate::profile::{ConnectionSettings, EnvironmentKind, Role};

/// The variable naming the `stockguard` binary when it is not beside the console.
pub const BIN_VAR: &str = "STOCKGUARD_BIN";

/// How long a runner may take to connect and write its run before [`start`] gives up on it.
pub const APPEAR_WITHIN: Duration = Duration::from_secs(20);

/// Why this connection may not start a drill. Tagged by `kind`, so a window can word it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Refusal {
    /// Drills are never run against a production sale.
    Production,
    /// A staging sale takes drills only when the operator confirms it is staging.
    StagingUnconfirmed,
    /// The profile is marked read-only.
    ReadOnly,
    /// The role's grants do not cover a drill (only facilitators and admins run them).
    Role { role: Role },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Production => f.write_str("drills are refused on production profiles"),
            Self::StagingUnconfirmed => f.write_str("this profile is staging: confirm it to run a drill on it"),
            Self::ReadOnly => f.write_str("this profile is read-only: drills change the sale"),
            Self::Role { role } => {
                write!(f, "the {} role may not run drills; facilitator and admin may", role.as_str())
            }
        }
    }
}

/// Whether the connection may start a drill; `staging_confirmed` says the operator confirmed
/// a staging profile. Production is refused first: no confirmation or role lifts it.
pub fn refusal(settings: &ConnectionSettings, staging_confirmed: bool) -> Option<Refusal> {
    match settings.environment {
        EnvironmentKind::Production => return Some(Refusal::Production),
        EnvironmentKind::Staging if !staging_confirmed => return Some(Refusal::StagingUnconfirmed),
        _ => {}
    }
    settings.may(Action::RunDrill).err().map(Refusal::from)
}

/// The rule's refusal ([`Action::RunDrill`]), in this enum's words for the window.
impl From<Refused> for Refusal {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::ReadOnly { .. } => Self::ReadOnly,
            Refused::Role { role, .. } => Self::Role { role },
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("{0}")]
    Refused(Refusal),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("the short factor must be above 0 and at most 1, not {0}")]
    BadShort(f64),
    #[error(
        "the `stockguard` binary that runs drills is not at {}: build it (`cargo build -p stockguard`) \
         or name it with {BIN_VAR}",
        .0.display()
    )]
    BinaryMissing(PathBuf),
    #[error("cannot start {}: {source}", binary.display())]
    Spawn { binary: PathBuf, source: std::io::Error },
    #[error("the drill runner stopped ({status}) before its run began: {said}")]
    Exited { status: String, said: String },
    #[error("the drill runner wrote no run within {} s (its output: {})", .waited.as_secs(), .log.display())]
    NoRun { waited: Duration, log: PathBuf },
    #[error("cannot read the drill runs: {0}")]
    Runs(#[from] DrillRunError),
}

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchRequest {
    /// A built-in drill's name (a console runs only those: the files are versioned with it).
    pub drill: String,
    /// The short form's factor (0 < f <= 1), scaling buyers, stock and the timeline.
    pub short: Option<f64>,
    /// Latency added to every MySQL reply for the whole load.
    pub extra_db_latency_ms: u64,
    /// The operator confirmed a staging profile.
    pub staging_confirmed: bool,
}

impl LaunchRequest {
    /// Checks what the runner would refuse, before anything is spawned.
    pub fn check(&self, settings: &ConnectionSettings) -> Result<(), LaunchError> {
        if let Some(refused) = refusal(settings, self.staging_confirmed) {
            return Err(LaunchError::Refused(refused));
        }
        Plan::builtin(&self.drill)?;
        match self.short {
            Some(f) if !(f > 0.0 && f <= 1.0) => Err(LaunchError::BadShort(f)),
            _ => Ok(()),
        }
    }
}

/// The `stockguard` binary: `explicit` (from [`BIN_VAR`]) when given, else the one beside
/// `console_exe`. It must exist: a missing binary is said now, with where it was looked for.
pub fn runner_binary(explicit: Option<OsString>, console_exe: &Path) -> Result<PathBuf, LaunchError> {
    let binary = match explicit.filter(|p| !p.is_empty()) {
        Some(path) => PathBuf::from(path),
        None => console_exe.with_file_name(format!("stockguard{}", std::env::consts::EXE_SUFFIX)),
    };
    if binary.is_file() {
        Ok(binary)
    } else {
        Err(LaunchError::BinaryMissing(binary))
    }
}

/// The environment variables a runner must not inherit: a profile name or a password of the
/// console's own environment would be resolved again by the child, and could point elsewhere.
const NOT_INHERITED: [&str; 6] = [
    "STOCKGUARD_PROFILE",
    "STOCKGUARD_MYSQL_REPLICA_URL",
    "STOCKGUARD_MYSQL_PASSWORD",
    "STOCKGUARD_MYSQL_REPLICA_PASSWORD",
    "STOCKGUARD_REDIS_PASSWORD",
    "STOCKGUARD_LOG",
];

/// The command that runs `request` against the sale `settings` connect to.
pub fn runner_command(binary: &Path, settings: &ConnectionSettings, request: &LaunchRequest) -> std::process::Command {
    let mut cmd = std::process::Command::new(binary);
    cmd.args(["drill", "run", &request.drill]);
    if let Some(f) = request.short {
        cmd.arg("--short").arg(f.to_string());
    }
    if request.extra_db_latency_ms > 0 {
        cmd.arg("--extra-db-latency-ms").arg(request.extra_db_latency_ms.to_string());
    }
    if settings.environment == EnvironmentKind::Staging && request.staging_confirmed {
        cmd.arg("--confirm");
    }
    for var in NOT_INHERITED {
        cmd.env_remove(var);
    }
    // The URLs carry the passwords the console resolved (from the keychain): the child gets
    // them whole and looks nothing up.
    cmd.env("STOCKGUARD_MYSQL_URL", settings.mysql_url.expose_secret())
        .env("STOCKGUARD_REDIS_URL", settings.redis_url.expose_secret())
        .env("STOCKGUARD_KEY_PREFIX", &settings.key_prefix)
        .env("STOCKGUARD_ENVIRONMENT", settings.environment.as_str())
        .env("STOCKGUARD_ACTOR", &settings.actor)
        // The runner asks the same rule again, as the same role.
        .env("STOCKGUARD_ROLE", settings.role.as_str());
    cmd
}

/// A drill the runner has begun.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Started {
    pub run_id: u64,
    /// The runner's process id, for the log.
    pub pid: u32,
    /// Where the runner's own output goes.
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub log: PathBuf,
}

/// Runs `request` with `binary`, its output appended to `log`, and waits until the runner has
/// written its run (a run newer than every run there was before it started). A runner that
/// stops first is reported with the last line it wrote. The process is reaped in the
/// background when it ends; nothing else is asked of it.
pub async fn start(
    pool: &MySqlPool,
    settings: &ConnectionSettings,
    binary: &Path,
    request: &LaunchRequest,
    log: &Path,
) -> Result<Started, LaunchError> {
    request.check(settings)?;
    let newest_before: u64 = sqlx::query_scalar("SELECT CAST(COALESCE(MAX(id), 0) AS UNSIGNED) FROM drill_runs")
        .fetch_one(pool)
        .await
        .map_err(DrillRunError::from)?;
    let spawn_error = |source| LaunchError::Spawn { binary: binary.to_path_buf(), source };
    let output = std::fs::OpenOptions::new().create(true).append(true).open(log).map_err(spawn_error)?;
    let mut cmd = tokio::process::Command::from(runner_command(binary, settings, request));
    cmd.stdin(Stdio::null()).stdout(output.try_clone().map_err(spawn_error)?).stderr(output);
    let mut child = cmd.spawn().map_err(spawn_error)?;
    let pid = child.id().unwrap_or_default();
    let deadline = Instant::now() + APPEAR_WITHIN;
    loop {
        let run: Option<u64> =
            sqlx::query_scalar("SELECT CAST(MIN(id) AS UNSIGNED) FROM drill_runs WHERE id > ? AND runner LIKE ?")
                .bind(newest_before)
                .bind(format!("%:{pid}"))
                .fetch_one(pool)
                .await
                .map_err(DrillRunError::from)?;
        if let Some(run_id) = run {
            tokio::spawn(async move { child.wait().await });
            return Ok(Started { run_id, pid, log: log.to_path_buf() });
        }
        if let Some(status) = child.try_wait().map_err(spawn_error)? {
            let said = std::fs::read_to_string(log).unwrap_or_default();
            let said = said.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("(nothing)").trim().to_string();
            return Err(LaunchError::Exited { status: status.to_string(), said });
        }
        if Instant::now() >= deadline {
            tokio::spawn(async move { child.wait().await });
            return Err(LaunchError::NoRun { waited: APPEAR_WITHIN, log: log.to_path_buf() });
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(environment: EnvironmentKind) -> ConnectionSettings {
        let mut s =
            ConnectionSettings::from_urls(environment, "mysql://u:pw@db:3306/sale", "redis://cache:6379/", "sg");
        s.actor = "facilitator-1".into();
        s
    }

    fn request(drill: &str) -> LaunchRequest {
        LaunchRequest { drill: drill.into(), short: Some(0.1), extra_db_latency_ms: 0, staging_confirmed: false }
    }

    #[test]
    fn production_is_refused_whatever_is_confirmed_and_staging_only_unconfirmed() {
        assert_eq!(refusal(&settings(EnvironmentKind::Production), true), Some(Refusal::Production));
        assert_eq!(refusal(&settings(EnvironmentKind::Staging), false), Some(Refusal::StagingUnconfirmed));
        assert_eq!(refusal(&settings(EnvironmentKind::Staging), true), None);
        assert_eq!(refusal(&settings(EnvironmentKind::Sandbox), false), None);
    }

    #[test]
    fn a_read_only_profile_and_a_viewer_are_refused_with_their_reason() {
        let mut s = settings(EnvironmentKind::Sandbox);
        s.role = Role::Viewer;
        assert_eq!(refusal(&s, false), Some(Refusal::Role { role: Role::Viewer }));
        s.role = Role::Oncall;
        assert_eq!(
            refusal(&s, false),
            Some(Refusal::Role { role: Role::Oncall }),
            "the catalogue gives on-call no drill"
        );
        s.read_only = true;
        assert_eq!(refusal(&s, false), Some(Refusal::ReadOnly));
    }

    #[test]
    fn a_request_for_an_unknown_drill_or_a_factor_above_one_is_refused_before_spawning() {
        let s = settings(EnvironmentKind::Sandbox);
        assert!(matches!(request("no-such-drill").check(&s), Err(LaunchError::Plan(PlanError::NoSuchDrill(_)))));
        let long = LaunchRequest { short: Some(1.5), ..request("redis-slow") };
        assert!(matches!(long.check(&s), Err(LaunchError::BadShort(_))));
        assert!(request("redis-slow").check(&s).is_ok());
    }

    #[test]
    fn the_runner_gets_the_connections_settings_in_its_environment_and_no_profile() {
        let s = settings(EnvironmentKind::Staging);
        let req = LaunchRequest { extra_db_latency_ms: 40, staging_confirmed: true, ..request("db-slow") };
        let cmd = runner_command(Path::new("/opt/sg/stockguard"), &s, &req);
        let args: Vec<_> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(args, ["drill", "run", "db-slow", "--short", "0.1", "--extra-db-latency-ms", "40", "--confirm"]);
        let env: std::collections::BTreeMap<_, _> = cmd
            .get_envs()
            .map(|(k, v)| (k.to_string_lossy().into_owned(), v.map(|v| v.to_string_lossy().into_owned())))
            .collect();
        assert_eq!(env["STOCKGUARD_MYSQL_URL"].as_deref(), Some("mysql://u:pw@db:3306/sale"));
        assert_eq!(env["STOCKGUARD_ENVIRONMENT"].as_deref(), Some("staging"));
        assert_eq!(env["STOCKGUARD_ACTOR"].as_deref(), Some("facilitator-1"));
        assert_eq!(env["STOCKGUARD_PROFILE"], None, "removed, not inherited");
    }

    #[test]
    fn a_missing_binary_is_named_where_it_was_looked_for() {
        let dir = tempfile::tempdir().unwrap();
        let app = dir.path().join("stockguard-desktop");
        let err = runner_binary(None, &app).unwrap_err();
        assert!(matches!(&err, LaunchError::BinaryMissing(p) if p == &dir.path().join("stockguard")), "{err}");
        std::fs::write(dir.path().join("stockguard"), b"").unwrap();
        assert_eq!(runner_binary(Some(OsString::new()), &app).unwrap(), dir.path().join("stockguard"));
        let elsewhere = dir.path().join("bin/stockguard");
        assert!(matches!(runner_binary(Some(elsewhere.into()), &app), Err(LaunchError::BinaryMissing(_))));
    }
}
