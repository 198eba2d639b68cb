//! The error the window receives: a kind it can branch on, a code with parameters it says in
//! the user's language (ui/i18n.js, `msg_<code>`), and the English message, kept for logs and
//! as the window's fallback. Every core error is mapped here by its variant, never by its text.
//!
//! A new error joins by a `MessageCode` variant (then `ui/types.d.ts` is regenerated and
//! `tsc` fails until ui/i18n.js has its English and Chinese templates). What a server or the
//! OS said verbatim (a MySQL error, an I/O error) travels as the parameter `detail`: the window
//! shows it apart, marked as English, after the sentence in the user's language.

use std::collections::BTreeMap;
use std::fmt::Display;

use serde::{Serialize, Serializer};
use stockguard_core::action::{Action, Refused};
use stockguard_core::drills::launch::LaunchError;
use stockguard_core::drills::report::ReportError;
use stockguard_core::drills::DrillRunError;
use stockguard_core::profile::{ProfileError, Role};
use stockguard_core::rewrite::RewriteError;
use stockguard_core::sale::{Capability, Grounds, Refusal, SaleError};
use stockguard_core::step::chain;
use stockguard_core::switch::SwitchError;

/// What the window can branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Profile,
    Keychain,
    Connect,
    NotConnected,
    Query,
    Refused,
    ConfirmationRequired,
    Invalid,
    Chart,
    /// The drill runner (the `stockguard` binary) could not be started or did not begin.
    Runner,
}

/// What an error says, stable across releases and languages: the window has a template per
/// code in each language; the parameters fill it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum MessageCode {
    /// No template: the window shows the kind's heading and the English message.
    Other,
    NotConnected,
    NoProductPicked,
    ReasonRequired,
    NotesRequired,
    ConfirmProduct,
    ConfirmScope,
    ConfirmCase,
    /// The rule per action ([`Refused`]): a read-only profile, with `action`.
    RefusedReadOnly,
    /// The rule per action: the role's grants do not cover it; `role`, `action`, `allowed`
    /// (the roles that may).
    RefusedRole,
    DrillRefusedProduction,
    DrillRefusedStaging,
    UnknownProfile,
    NoProfile,
    InvalidProfileName,
    ChooseEnvironment,
    MalformedUrl,
    PasswordInUrl,
    InvalidKeyPrefix,
    ProfilesFile,
    NoConfigDir,
    NoKeychain,
    MissingSecret,
    /// A profile reads the password from `env_var`, which is not set; `profile`.
    PasswordNotInEnvironment,
    KeychainFailed,
    MysqlUnreachable,
    MysqlAccessDenied,
    MysqlUnknownDatabase,
    RedisUnreachable,
    ConnectFailed,
    QueryFailed,
    ExitRedisUnreachable,
    InstancesCannotReachRedis,
    NotAcknowledged,
    NotDrained,
    RewriteNotClean,
    ChangedMeanwhile,
    DriftAfterExit,
    ExitFailed,
    SwitchReadTimedOut,
    NoSuchRun,
    RunFinished,
    DrillRunning,
    DrillStarting,
    BadShort,
    BadThreshold,
    DrillPlan,
    RunnerMissing,
    RunnerFailed,
    NoSuchCase,
    NoSuchProduct,
    NothingToCompensate,
    ChooseCompensation,
    BadPlan,
    CompensationRefused,
    WriteFailed,
    ChartNoProducts,
    ChartBadSize,
    ChartFailed,
    AlertAlreadyAcknowledged,
    AlertNotFiring,
    AckTooShort,
    InvalidThresholds,
    /// What a sale read over its adapter cannot do (the core's table, [`Refusal`]), with
    /// `sale`; the message is the core's, the CLI's words.
    AdapterNoDrills,
    AdapterNoLedgerCheck,
    AdapterNoSwitch,
    AdapterNoRewrite,
    AdapterNoBurndown,
    AdapterNoRights,
    /// An adapter sale's record (case, audit, acknowledgement) needs its state database.
    AdapterNoStateDb,
    /// Reading or writing a sale over its adapter failed: `detail`.
    AdapterFailed,
}

/// A message: its code, what fills the code's template, and the whole English sentence.
#[derive(Debug, Clone)]
pub struct Said {
    pub code: MessageCode,
    pub params: BTreeMap<String, String>,
    pub message: String,
}

impl Said {
    /// `params` by name; `detail` is what a server or the OS said, shown verbatim.
    pub fn new(code: MessageCode, params: &[(&str, &dyn Display)], message: impl Into<String>) -> Self {
        let params = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Self { code, params, message: message.into() }
    }

    /// A message with a code and no parameters but the detail (the whole English message).
    fn detailed(code: MessageCode, message: String) -> Self {
        let said = Self::new(code, &[("detail", &message)], String::new());
        Self { message, ..said }
    }
}

impl Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Text without a code (the window shows it under the kind's heading, in English).
impl From<String> for Said {
    fn from(message: String) -> Self {
        Self { code: MessageCode::Other, params: BTreeMap::new(), message }
    }
}

/// An error as the window receives it.
#[derive(Debug, Serialize, ts_rs::TS)]
#[ts(rename = "DesktopError")]
pub struct ErrorWire {
    pub kind: ErrorKind,
    pub code: MessageCode,
    pub params: BTreeMap<String, String>,
    /// The English sentence: for logs, and the window's fallback.
    pub message: String,
}

#[derive(Debug, thiserror::Error)]
pub enum DesktopError {
    /// No usable profile, or a bad one (the message says which field and why).
    #[error("{0}")]
    Profile(Said),
    /// The OS keychain could not store or give a password.
    #[error("{0}")]
    Keychain(Said),
    /// A server could not be reached or refused us.
    #[error("{0}")]
    Connect(Said),
    /// Nothing is connected yet: pick a profile on the Connections screen.
    #[error("not connected: pick a profile on the Connections screen and press Connect")]
    NotConnected,
    /// A query failed.
    #[error("{0}")]
    Query(Said),
    /// The action is not allowed with this profile (read-only, role).
    #[error("{0}")]
    Refused(Said),
    /// Production: the product id must be typed again.
    #[error("production: type the product id {0} to confirm the rewrite")]
    ConfirmationRequired(stockguard_core::ProductId),
    /// The input cannot be used as given.
    #[error("{0}")]
    Invalid(Said),
    /// A chart could not be drawn or written.
    #[error("{0}")]
    Chart(Said),
    /// The drill runner is missing, could not start, or stopped before its run began.
    #[error("{0}")]
    Runner(Said),
}

impl DesktopError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Profile(_) => ErrorKind::Profile,
            Self::Keychain(_) => ErrorKind::Keychain,
            Self::Connect(_) => ErrorKind::Connect,
            Self::NotConnected => ErrorKind::NotConnected,
            Self::Query(_) => ErrorKind::Query,
            Self::Refused(_) => ErrorKind::Refused,
            Self::ConfirmationRequired(_) => ErrorKind::ConfirmationRequired,
            Self::Invalid(_) => ErrorKind::Invalid,
            Self::Chart(_) => ErrorKind::Chart,
            Self::Runner(_) => ErrorKind::Runner,
        }
    }

    /// What the window receives.
    pub fn wire(&self) -> ErrorWire {
        let (code, params) = match self {
            Self::NotConnected => (MessageCode::NotConnected, BTreeMap::new()),
            Self::ConfirmationRequired(id) => {
                (MessageCode::ConfirmProduct, BTreeMap::from([("product".to_string(), id.to_string())]))
            }
            Self::Profile(s)
            | Self::Keychain(s)
            | Self::Connect(s)
            | Self::Query(s)
            | Self::Refused(s)
            | Self::Invalid(s)
            | Self::Chart(s)
            | Self::Runner(s) => (s.code, s.params.clone()),
        };
        ErrorWire { kind: self.kind(), code, params, message: self.to_string() }
    }
}

impl Serialize for DesktopError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.wire().serialize(serializer)
    }
}

impl From<ProfileError> for DesktopError {
    fn from(e: ProfileError) -> Self {
        use MessageCode as C;
        let m = chain(&e);
        let said = match &e {
            ProfileError::UnknownProfile { name, known } => {
                Said::new(C::UnknownProfile, &[("name", name), ("known", known)], m)
            }
            ProfileError::NoProfile | ProfileError::OneUrlOnly { .. } => Said::new(C::NoProfile, &[], m),
            ProfileError::InvalidName(name) => Said::new(C::InvalidProfileName, &[("name", name)], m),
            ProfileError::MalformedUrl { what, url, reason } => {
                Said::new(C::MalformedUrl, &[("what", what), ("url", url), ("detail", reason)], m)
            }
            ProfileError::PasswordInUrl { what } => Said::new(C::PasswordInUrl, &[("what", what)], m),
            ProfileError::InvalidPrefix(prefix) => Said::new(C::InvalidKeyPrefix, &[("prefix", prefix)], m),
            ProfileError::InvalidThresholds(_) => Said::new(C::InvalidThresholds, &[], m),
            ProfileError::UnknownRole(_)
            | ProfileError::Tls(_)
            | ProfileError::SslMode(_)
            | ProfileError::Bastion(_)
            | ProfileError::SshKeyMissing
            | ProfileError::SshWithoutBastion
            | ProfileError::ClusterThroughBastion => Said::new(C::Other, &[], m),
            ProfileError::Read { path, source } | ProfileError::Write { path, source } => {
                Said::new(C::ProfilesFile, &[("path", path), ("detail", source)], m)
            }
            ProfileError::Parse { path, reason } => {
                Said::new(C::ProfilesFile, &[("path", path), ("detail", reason)], m)
            }
            ProfileError::NoConfigDir => Said::new(C::NoConfigDir, &[], m),
            ProfileError::NoKeychain { reason, slot, env_var } => {
                Said::new(C::NoKeychain, &[("slot", slot), ("env_var", env_var), ("detail", reason)], m)
            }
            ProfileError::MissingSecret { profile, slot } => {
                Said::new(C::MissingSecret, &[("profile", profile), ("slot", slot)], m)
            }
            ProfileError::PasswordNotInEnvironment { profile, slot, env_var } => {
                Said::new(C::PasswordNotInEnvironment, &[("profile", profile), ("slot", slot), ("env_var", env_var)], m)
            }
            ProfileError::Keychain { slot, reason } => {
                Said::new(C::KeychainFailed, &[("slot", slot), ("detail", reason)], m)
            }
        };
        match e {
            ProfileError::NoKeychain { .. }
            | ProfileError::MissingSecret { .. }
            | ProfileError::Keychain { .. }
            | ProfileError::PasswordNotInEnvironment { .. } => Self::Keychain(said),
            _ => Self::Profile(said),
        }
    }
}

impl From<stockguard_core::connect::ConnectError> for DesktopError {
    fn from(e: stockguard_core::connect::ConnectError) -> Self {
        use stockguard_core::connect::ConnectError as E;
        use MessageCode as C;
        let m = chain(&e);
        Self::Connect(match &e {
            E::MalformedMysqlUrl { url, reason } => {
                Said::new(C::MalformedUrl, &[("what", &"MySQL"), ("url", url), ("detail", reason)], m)
            }
            E::MalformedRedisUrl { url, reason } => {
                Said::new(C::MalformedUrl, &[("what", &"Redis"), ("url", url), ("detail", reason)], m)
            }
            E::MysqlUnreachable { url, reason } => {
                Said::new(C::MysqlUnreachable, &[("url", url), ("detail", reason)], m)
            }
            E::MysqlAccessDenied { url, reason } => {
                Said::new(C::MysqlAccessDenied, &[("url", url), ("detail", reason)], m)
            }
            E::MysqlUnknownDatabase { url, reason } => {
                Said::new(C::MysqlUnknownDatabase, &[("url", url), ("detail", reason)], m)
            }
            E::RedisUnreachable { url, reason } => {
                Said::new(C::RedisUnreachable, &[("url", url), ("detail", reason)], m)
            }
            // A refused handshake says in the core's one line what to check (the CA, the
            // client certificate).
            E::Mysql { .. }
            | E::Migrate { .. }
            | E::MigrateNeedsTriggerPrivilege { .. }
            | E::MysqlTls { .. }
            | E::RedisTls { .. }
            | E::TlsFile(_)
            // The bastion's refusal (an unknown host key with its fingerprint) likewise.
            | E::Bastion(_)
            | E::ClusterThroughBastion { .. } => Said::detailed(C::ConnectFailed, m),
        })
    }
}

impl From<stockguard_core::recon::ReconError> for DesktopError {
    fn from(e: stockguard_core::recon::ReconError) -> Self {
        Self::Query(Said::detailed(MessageCode::QueryFailed, e.to_string()))
    }
}

impl From<stockguard_core::recon::ledger::LedgerError> for DesktopError {
    fn from(e: stockguard_core::recon::ledger::LedgerError) -> Self {
        Self::Query(Said::detailed(MessageCode::QueryFailed, e.to_string()))
    }
}

impl From<sqlx::Error> for DesktopError {
    fn from(e: sqlx::Error) -> Self {
        Self::Query(Said::detailed(MessageCode::QueryFailed, format!("DB: {e}")))
    }
}

impl From<stockguard_core::chart::ChartError> for DesktopError {
    fn from(e: stockguard_core::chart::ChartError) -> Self {
        use stockguard_core::chart::ChartError as E;
        use MessageCode as C;
        let m = chain(&e);
        Self::Chart(match &e {
            E::NoProducts => Said::new(C::ChartNoProducts, &[], m),
            E::BadSize { width, height } => Said::new(C::ChartBadSize, &[("width", width), ("height", height)], m),
            E::Write { path, reason } => Said::new(C::WriteFailed, &[("path", path), ("detail", reason)], m),
            E::Draw { .. } => Said::detailed(C::ChartFailed, m),
        })
    }
}

impl From<stockguard_core::compensation::CompensationError> for DesktopError {
    fn from(e: stockguard_core::compensation::CompensationError) -> Self {
        use stockguard_core::compensation::CompensationError as E;
        use MessageCode as C;
        let m = chain(&e);
        match e {
            // The database's own reason (its SIGNAL text), verbatim.
            E::Refused(why) => Self::Refused(Said::new(C::CompensationRefused, &[("detail", &why)], why.clone())),
            E::BadPlan(why) => Self::Invalid(Said::new(C::BadPlan, &[("detail", &why)], why.clone())),
            E::NoSuchCase(id) => Self::Invalid(Said::new(C::NoSuchCase, &[("case", &id)], m)),
            E::NoSuchProduct(id) => Self::Invalid(Said::new(C::NoSuchProduct, &[("product", &id)], m)),
            E::NothingToCompensate(id) => Self::Invalid(Said::new(C::NothingToCompensate, &[("product", &id)], m)),
            E::Db(_) | E::Sale(_) => Self::Query(Said::detailed(C::QueryFailed, m)),
        }
    }
}

/// The one refusal of the rule per action, whichever door asked: the action (and the role,
/// with the roles that may) as parameters, so the window words it in its language.
impl From<Refused> for DesktopError {
    fn from(refused: Refused) -> Self {
        use MessageCode as C;
        let m = refused.to_string();
        match refused {
            Refused::ReadOnly { action } => {
                Self::Refused(Said::new(C::RefusedReadOnly, &[("action", &action.as_str())], m))
            }
            Refused::Role { role, action } => {
                let allowed: Vec<&str> =
                    Role::ALL.into_iter().filter(|r| action.allowed_for(*r)).map(Role::as_str).collect();
                Self::Refused(Said::new(
                    C::RefusedRole,
                    &[("role", &role.as_str()), ("action", &action.as_str()), ("allowed", &allowed.join(","))],
                    m,
                ))
            }
        }
    }
}

impl From<RewriteError> for DesktopError {
    fn from(e: RewriteError) -> Self {
        use MessageCode as C;
        let m = chain(&e);
        match e {
            RewriteError::ConfirmationRequired(id) => Self::ConfirmationRequired(id.into()),
            RewriteError::Refused(refused) => refused.into(),
            RewriteError::NoReason => Self::Invalid(Said::new(C::ReasonRequired, &[], m)),
            RewriteError::Recon(_) | RewriteError::Db(_) | RewriteError::Redis(_) | RewriteError::RunMissing { .. } => {
                Self::Query(Said::detailed(C::QueryFailed, m))
            }
        }
    }
}

impl From<SwitchError> for DesktopError {
    fn from(e: SwitchError) -> Self {
        use MessageCode as C;
        let m = chain(&e);
        match &e {
            SwitchError::Refused(refused) => (*refused).into(),
            SwitchError::ConfirmationRequired(scope) => {
                Self::Refused(Said::new(C::ConfirmScope, &[("scope", scope)], m))
            }
            SwitchError::InstancesCannotReachRedis(which) => {
                Self::Refused(Said::new(C::InstancesCannotReachRedis, &[("instances", &which.join(", "))], m))
            }
            SwitchError::NotAcknowledged { revision, applied, live } => Self::Refused(Said::new(
                C::NotAcknowledged,
                &[("revision", revision), ("applied", applied), ("live", live)],
                m,
            )),
            SwitchError::NotDrained(n) => Self::Refused(Said::new(C::NotDrained, &[("n", n)], m)),
            SwitchError::RewriteNotClean(product, outcome) => Self::Refused(Said::new(
                C::RewriteNotClean,
                &[("product", product), ("outcome", &format!("{outcome:?}"))],
                m,
            )),
            SwitchError::ChangedMeanwhile { scope, expected, found, mode, changed_by } => Self::Refused(Said::new(
                C::ChangedMeanwhile,
                &[
                    ("scope", scope),
                    ("expected", expected),
                    ("found", found),
                    ("mode", &format!("{mode:?}").to_uppercase()),
                    ("by", changed_by),
                ],
                m,
            )),
            SwitchError::DriftAfterExit(drifts) => Self::Refused(Said::new(
                C::DriftAfterExit,
                &[("products", &drifts.iter().map(|d| d.product_id.to_string()).collect::<Vec<_>>().join(", "))],
                m,
            )),
            SwitchError::ExitFailed { .. } => Self::Refused(Said::detailed(C::ExitFailed, m)),
            SwitchError::NoReason => Self::Invalid(Said::new(C::ReasonRequired, &[], m)),
            SwitchError::RedisUnreachable(_) => Self::Connect(Said::detailed(C::ExitRedisUnreachable, m)),
            SwitchError::ReadTimedOut(waited) => {
                Self::Connect(Said::new(C::SwitchReadTimedOut, &[("ms", &waited.as_millis())], m))
            }
            SwitchError::Rewrite(..)
            | SwitchError::RewriteBatch { .. }
            | SwitchError::Corrupt(_)
            | SwitchError::Recon(_)
            | SwitchError::Db(_)
            | SwitchError::Redis(_) => Self::Query(Said::detailed(C::QueryFailed, m)),
        }
    }
}

impl From<DrillRunError> for DesktopError {
    fn from(e: DrillRunError) -> Self {
        use MessageCode as C;
        let m = chain(&e);
        match e {
            DrillRunError::Refused(refused) => refused.into(),
            DrillRunError::NoReason => Self::Invalid(Said::new(C::ReasonRequired, &[], m)),
            DrillRunError::NoNotes => Self::Invalid(Said::new(C::NotesRequired, &[], m)),
            DrillRunError::NoSuchRun(id) => Self::Invalid(Said::new(C::NoSuchRun, &[("run", &id)], m)),
            DrillRunError::AlreadyFinished(id) => Self::Invalid(Said::new(C::RunFinished, &[("run", &id)], m)),
            DrillRunError::AnotherRunning { id, scenario, started_by } => Self::Refused(Said::new(
                C::DrillRunning,
                &[("run", &id), ("scenario", &scenario), ("by", &started_by)],
                m,
            )),
            DrillRunError::BeginBusy => Self::Refused(Said::new(C::DrillStarting, &[], m)),
            DrillRunError::UnknownStatus(_)
            | DrillRunError::RigRow { .. }
            | DrillRunError::RigKeys { .. }
            | DrillRunError::Db(_) => Self::Query(Said::detailed(C::QueryFailed, m)),
        }
    }
}

impl From<ReportError> for DesktopError {
    fn from(e: ReportError) -> Self {
        match e {
            ReportError::Run(e) => e.into(),
        }
    }
}

impl From<LaunchError> for DesktopError {
    fn from(e: LaunchError) -> Self {
        use stockguard_core::drills::launch::Refusal;
        use MessageCode as C;
        let m = chain(&e);
        match e {
            LaunchError::Refused(Refusal::Production) => Self::Refused(Said::new(C::DrillRefusedProduction, &[], m)),
            LaunchError::Refused(Refusal::StagingUnconfirmed) => {
                Self::Refused(Said::new(C::DrillRefusedStaging, &[], m))
            }
            LaunchError::Refused(Refusal::ReadOnly) => Refused::ReadOnly { action: Action::RunDrill }.into(),
            LaunchError::Refused(Refusal::Role { role }) => Refused::Role { role, action: Action::RunDrill }.into(),
            LaunchError::Plan(_) => Self::Invalid(Said::detailed(C::DrillPlan, m)),
            LaunchError::BadShort(v) => Self::Invalid(Said::new(C::BadShort, &[("value", &v)], m)),
            LaunchError::BinaryMissing(ref path) => {
                Self::Runner(Said::new(C::RunnerMissing, &[("path", &path.display())], m))
            }
            LaunchError::Spawn { .. } | LaunchError::Exited { .. } | LaunchError::NoRun { .. } => {
                Self::Runner(Said::detailed(C::RunnerFailed, m))
            }
            LaunchError::Runs(e) => e.into(),
        }
    }
}

impl From<stockguard_core::alerts::AlertError> for DesktopError {
    fn from(e: stockguard_core::alerts::AlertError) -> Self {
        use stockguard_core::alerts::AlertError as E;
        use MessageCode as C;
        let m = chain(&e);
        match &e {
            E::Refused(refused) => (*refused).into(),
            E::AlreadyAcknowledged(key) => Self::Refused(Said::new(C::AlertAlreadyAcknowledged, &[("alert", key)], m)),
            E::NoReason => Self::Invalid(Said::new(C::ReasonRequired, &[], m)),
            E::NotFiring(key) => Self::Invalid(Said::new(C::AlertNotFiring, &[("alert", key)], m)),
            E::Recon(_) | E::Switch(_) | E::Redis(_) | E::Db(_) => Self::Query(Said::detailed(C::QueryFailed, m)),
        }
    }
}

impl From<stockguard_core::timeline::TimelineError> for DesktopError {
    fn from(e: stockguard_core::timeline::TimelineError) -> Self {
        use stockguard_core::timeline::TimelineError as E;
        match e {
            E::Adapter(e) => e.into(),
            E::Db(_) => Self::Query(Said::detailed(MessageCode::QueryFailed, chain(&e))),
            E::EmptyWindow { .. } => Self::Invalid(Said::from(chain(&e))),
        }
    }
}

impl From<stockguard_core::overview::OverviewError> for DesktopError {
    fn from(e: stockguard_core::overview::OverviewError) -> Self {
        use stockguard_core::overview::OverviewError as E;
        use MessageCode as C;
        let m = chain(&e);
        match e {
            E::NoSuchProduct(id) => Self::Invalid(Said::new(C::NoSuchProduct, &[("product", &id)], m)),
            E::Chart(e) => e.into(),
            _ => Self::Query(Said::detailed(C::QueryFailed, m)),
        }
    }
}

/// The core's refusal, in its own words (the CLI prints the same line); the code lets the
/// window say it in Chinese too.
impl From<Refusal> for DesktopError {
    fn from(r: Refusal) -> Self {
        Self::Refused(Said::new(refusal_code(&r), &[("sale", &r.sale)], r.to_string()))
    }
}

/// The window's message code of a refusal: one per capability the window refuses on a sale
/// over an adapter, whose template is the core's sentence (held by a test); any other refusal
/// (a file that lacks a section, say) is shown in the core's English words.
fn refusal_code(r: &Refusal) -> MessageCode {
    use MessageCode as C;
    match (r.grounds, r.capability) {
        (Grounds::Never, Capability::Drills) => C::AdapterNoDrills,
        (Grounds::Never, Capability::LedgerCheck) => C::AdapterNoLedgerCheck,
        (Grounds::Never, Capability::Burndown) => C::AdapterNoBurndown,
        (Grounds::Never, Capability::Rights) => C::AdapterNoRights,
        (Grounds::NotOnThisPath, Capability::Degrade) => C::AdapterNoSwitch,
        (Grounds::NotOnThisPath, Capability::Repair) => C::AdapterNoRewrite,
        _ => C::Other,
    }
}

impl From<SaleError> for DesktopError {
    fn from(e: SaleError) -> Self {
        match e {
            SaleError::Profile(e) => e.into(),
            SaleError::Connect(e) => e.into(),
            SaleError::Adapter(e) => e.into(),
        }
    }
}

impl From<stockguard_core::adapter::AdapterError> for DesktopError {
    fn from(e: stockguard_core::adapter::AdapterError) -> Self {
        use stockguard_core::adapter::AdapterError as E;
        use MessageCode as C;
        let m = chain(&e);
        match e {
            E::StateConnect(e) | E::Connect(e) => e.into(),
            E::NotAllowed(refused) => refused.into(),
            E::ConfirmationRequired(id) => Self::ConfirmationRequired(id),
            E::UnknownProduct(id) => Self::Invalid(Said::new(C::NoSuchProduct, &[("product", &id)], m)),
            E::NoStateDb => Self::Refused(Said::new(C::AdapterNoStateDb, &[], m)),
            E::Refused(_) | E::ReadOnly { .. } => Self::Refused(Said::detailed(C::AdapterFailed, m)),
            E::File(_) => Self::Profile(Said::detailed(C::AdapterFailed, m)),
            E::Db { .. }
            | E::StateDb { .. }
            | E::Redis { .. }
            | E::Amqp { .. }
            | E::Management { .. }
            | E::Missing(_)
            | E::At { .. } => Self::Query(Said::detailed(C::AdapterFailed, m)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_reaches_the_window_with_its_kind_and_whole_message() {
        let json = serde_json::to_value(DesktopError::NotConnected).unwrap();
        assert_eq!(json["kind"], "not_connected");
        assert!(json["message"].as_str().unwrap().contains("Connections screen"), "{json}");
        let json = serde_json::to_value(DesktopError::from(RewriteError::ConfirmationRequired(1016))).unwrap();
        assert_eq!(json["kind"], "confirmation_required");
        assert_eq!(json["message"], "production: type the product id 1016 to confirm the rewrite");
    }

    #[test]
    fn an_error_carries_a_code_and_its_parameters_so_the_window_says_it_in_chinese_too() {
        let json = serde_json::to_value(DesktopError::from(RewriteError::ConfirmationRequired(1016))).unwrap();
        assert_eq!(
            (json["code"].as_str(), json["params"]["product"].as_str()),
            (Some("confirm_product"), Some("1016"))
        );
        let viewer = Refused::Role { role: stockguard_core::profile::Role::Viewer, action: Action::ChangeSwitch };
        let role = DesktopError::from(SwitchError::Refused(viewer)).wire();
        assert_eq!(
            (role.code, role.params["role"].as_str(), role.params["action"].as_str()),
            (MessageCode::RefusedRole, "viewer", "change_switch")
        );
        // What the server said verbatim travels apart, as `detail`.
        let url = DesktopError::from(ProfileError::MalformedUrl {
            what: "MySQL",
            url: "mysql://x".into(),
            reason: "no host".into(),
        })
        .wire();
        assert_eq!((url.code, url.params["detail"].as_str()), (MessageCode::MalformedUrl, "no host"));
        // Text without a code still reaches the window, marked as such.
        assert_eq!(DesktopError::Query("odd".to_string().into()).wire().code, MessageCode::Other);
    }

    #[test]
    fn a_read_only_profile_is_a_refusal_not_a_failure() {
        let read_only = Refused::ReadOnly { action: Action::RewriteStock };
        assert_eq!(DesktopError::from(RewriteError::Refused(read_only)).kind(), ErrorKind::Refused);
    }

    #[test]
    fn a_drill_refused_on_production_is_a_refusal_and_a_missing_runner_says_where_it_looked() {
        use stockguard_core::drills::launch::Refusal;
        let refused = DesktopError::from(LaunchError::Refused(Refusal::Production));
        assert_eq!(
            (refused.kind(), refused.to_string().as_str()),
            (ErrorKind::Refused, "drills are refused on production profiles")
        );
        let missing = DesktopError::from(LaunchError::BinaryMissing("/opt/sg/stockguard".into()));
        assert_eq!(missing.kind(), ErrorKind::Runner);
        assert!(missing.to_string().contains("/opt/sg/stockguard"), "{missing}");
    }

    /// The English template of `code` in ui/messages.js, its `{sale}` filled.
    fn window_template(code: &str, sale: &str) -> String {
        let js = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../ui/messages.js")).unwrap();
        let entry = &js[js.find(&format!("  {code}: {{")).unwrap_or_else(|| panic!("{code} in messages.js"))..];
        let en = &entry[entry.find("en: ").unwrap() + 4..];
        let quote = en.chars().next().unwrap();
        let body = &en[1..];
        let mut text = String::new();
        let mut chars = body.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => text.push(chars.next().unwrap()),
                c if c == quote => break,
                c => text.push(c),
            }
        }
        text.replace("{sale}", sale)
    }

    /// Every refusal the window has a template for says the core's sentence, the one the CLI
    /// prints: the two doors refuse in the same words.
    #[test]
    fn the_window_says_a_refusal_in_the_cores_words() {
        let refusal = |capability, grounds| {
            let why = match grounds {
                Grounds::NotOnThisPath => stockguard_core::sale::capability::elsewhere(capability),
                _ => match stockguard_core::sale::SaleKind::Adapter.supports(capability) {
                    stockguard_core::sale::Support::Unsupported(why) => why,
                    other => panic!("{capability:?} is {other:?} over an adapter"),
                },
            };
            Refusal { capability, kind: stockguard_core::sale::SaleKind::Adapter, sale: "mall".into(), grounds, why }
        };
        let cases = [
            (Capability::Drills, Grounds::Never),
            (Capability::LedgerCheck, Grounds::Never),
            (Capability::Burndown, Grounds::Never),
            (Capability::Rights, Grounds::Never),
            (Capability::Degrade, Grounds::NotOnThisPath),
            (Capability::Repair, Grounds::NotOnThisPath),
        ];
        for (capability, grounds) in cases {
            let r = refusal(capability, grounds);
            let json = serde_json::to_value(DesktopError::from(r.clone())).unwrap();
            let code = json["code"].as_str().unwrap().to_string();
            assert_ne!(code, "other", "{capability:?} has a code of its own");
            assert_eq!(json["message"], r.to_string(), "the message is the core's");
            assert_eq!(window_template(&code, "mall"), r.to_string(), "{code}: the window's words are the core's");
        }
    }
}
