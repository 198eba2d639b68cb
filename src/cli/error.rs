//! The CLI's error: every core error, shown as one line, with an exit code.

use stockguard_core::connect::ConnectError;
use stockguard_core::profile::ProfileError;
use stockguard_core::recon::ReconError;
use stockguard_engine::sandbox::SandboxError;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error(transparent)]
    Recon(#[from] ReconError),
    #[error(transparent)]
    Adapter(#[from] stockguard_core::adapter::AdapterError),
    #[error(transparent)]
    Load(#[from] stockguard_engine::load::LoadError),
    #[error(transparent)]
    Ledger(#[from] stockguard_core::recon::ledger::LedgerError),
    #[error(transparent)]
    Rewrite(#[from] stockguard_core::rewrite::RewriteError),
    #[error(transparent)]
    Switch(#[from] stockguard_core::switch::SwitchError),
    #[error(transparent)]
    Bench(#[from] stockguard_engine::bench::BenchError),
    #[error(transparent)]
    Compensation(#[from] stockguard_core::compensation::CompensationError),
    #[error(transparent)]
    DrillRun(#[from] stockguard_core::drills::DrillRunError),
    #[error(transparent)]
    Roles(#[from] stockguard_core::roles::RolesError),
    #[error(transparent)]
    DrillReport(#[from] stockguard_core::drills::report::ReportError),
    #[error(transparent)]
    Watch(#[from] stockguard_engine::watch::WatchError),
    #[error(transparent)]
    Alerts(#[from] stockguard_core::alerts::AlertError),
    #[error(transparent)]
    Overview(#[from] stockguard_core::overview::OverviewError),
    #[error(transparent)]
    Timeline(#[from] stockguard_core::timeline::TimelineError),
    #[error("cannot write {path}: {source}")]
    Write { path: String, source: std::io::Error },
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("cannot read the password from standard input: {0}")]
    Stdin(std::io::Error),
    #[error("{0}")]
    Refused(String),
    /// What this kind of sale cannot do (the core's one table, the window's words too).
    #[error(transparent)]
    NotForThisSale(#[from] stockguard_core::sale::Refusal),
    /// Several products were asked for and some failed; each failure was printed with its
    /// product id as it happened.
    #[error("{failed} of {total} rewrites failed (see above)")]
    RewritesFailed { failed: usize, total: usize },
    /// `drill compare` found the second run worse: its own exit code, so CI can gate on it.
    #[error("{} regression(s) against the baseline: {}", figures.len(), figures.join(", "))]
    Regressed { figures: Vec<&'static str> },
}

impl CliError {
    /// 1 for an expected failure (bad input, unreachable server); 2 is clap's usage error; 3 a
    /// regression `drill compare` found (the comparison itself was printed).
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Regressed { .. } => 3,
            _ => 1,
        }
    }
}

impl From<stockguard_core::sale::SaleError> for CliError {
    fn from(e: stockguard_core::sale::SaleError) -> Self {
        use stockguard_core::adapter::AdapterError;
        use stockguard_core::sale::SaleError;
        match e {
            SaleError::Profile(e) => Self::Profile(e),
            SaleError::Connect(e) => Self::Connect(e),
            // The connection's own words, as every other command says them.
            SaleError::Adapter(AdapterError::Connect(e)) => Self::Connect(e),
            SaleError::Adapter(e) => Self::Adapter(e),
        }
    }
}
