//! The error the window receives: a kind it can branch on and a message a person can act on.
//! Every core error is mapped here by kind, never by its text.

use serde::{Serialize, Serializer};
use stockguard_core::drills::launch::LaunchError;
use stockguard_core::drills::report::ReportError;
use stockguard_core::drills::DrillRunError;
use stockguard_core::profile::ProfileError;
use stockguard_core::rewrite::RewriteError;
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

/// An error as the window receives it: always a kind and the whole message.
#[derive(Debug, Serialize, ts_rs::TS)]
#[ts(rename = "DesktopError")]
pub struct ErrorWire {
    pub kind: ErrorKind,
    pub message: String,
}

#[derive(Debug, thiserror::Error)]
pub enum DesktopError {
    /// No usable profile, or a bad one (the message says which field and why).
    #[error("{0}")]
    Profile(String),
    /// The OS keychain could not store or give a password.
    #[error("{0}")]
    Keychain(String),
    /// A server could not be reached or refused us.
    #[error("{0}")]
    Connect(String),
    /// Nothing is connected yet: pick a profile on the Connections screen.
    #[error("not connected: pick a profile on the Connections screen and press Connect")]
    NotConnected,
    /// A query failed.
    #[error("{0}")]
    Query(String),
    /// The action is not allowed with this profile (read-only, role).
    #[error("{0}")]
    Refused(String),
    /// Production: the product id must be typed again.
    #[error("production: type the product id {0} to confirm the rewrite")]
    ConfirmationRequired(u64),
    /// The input cannot be used as given.
    #[error("{0}")]
    Invalid(String),
    /// A chart could not be drawn or written.
    #[error("{0}")]
    Chart(String),
    /// The drill runner is missing, could not start, or stopped before its run began.
    #[error("{0}")]
    Runner(String),
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
}

impl Serialize for DesktopError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ErrorWire { kind: self.kind(), message: self.to_string() }.serialize(serializer)
    }
}

impl From<ProfileError> for DesktopError {
    fn from(e: ProfileError) -> Self {
        match e {
            ProfileError::NoKeychain { .. }
            | ProfileError::MissingSecret { .. }
            | ProfileError::Keychain { .. }
            | ProfileError::CannotStoreSecret { .. } => Self::Keychain(e.to_string()),
            _ => Self::Profile(e.to_string()),
        }
    }
}

impl From<stockguard_core::connect::ConnectError> for DesktopError {
    fn from(e: stockguard_core::connect::ConnectError) -> Self {
        Self::Connect(e.to_string())
    }
}

impl From<stockguard_core::recon::ReconError> for DesktopError {
    fn from(e: stockguard_core::recon::ReconError) -> Self {
        Self::Query(e.to_string())
    }
}

impl From<stockguard_core::recon::ledger::LedgerError> for DesktopError {
    fn from(e: stockguard_core::recon::ledger::LedgerError) -> Self {
        Self::Query(e.to_string())
    }
}

impl From<sqlx::Error> for DesktopError {
    fn from(e: sqlx::Error) -> Self {
        Self::Query(format!("DB: {e}"))
    }
}

impl From<stockguard_core::chart::ChartError> for DesktopError {
    fn from(e: stockguard_core::chart::ChartError) -> Self {
        Self::Chart(e.to_string())
    }
}

impl From<stockguard_core::compensation::CompensationError> for DesktopError {
    fn from(e: stockguard_core::compensation::CompensationError) -> Self {
        use stockguard_core::compensation::CompensationError as E;
        match e {
            // The window labels it "Refused" already: the database's reason alone.
            E::Refused(why) => Self::Refused(why),
            E::BadPlan(_) | E::NoSuchCase(_) | E::NoSuchProduct(_) | E::NothingToCompensate(_) => {
                Self::Invalid(e.to_string())
            }
            E::Db(e) => e.into(),
        }
    }
}

impl From<RewriteError> for DesktopError {
    fn from(e: RewriteError) -> Self {
        match e {
            RewriteError::ConfirmationRequired(id) => Self::ConfirmationRequired(id),
            RewriteError::ReadOnly | RewriteError::RoleNotAllowed(_) => Self::Refused(e.to_string()),
            RewriteError::NoReason => Self::Invalid(e.to_string()),
            RewriteError::Recon(_) | RewriteError::Db(_) | RewriteError::Redis(_) | RewriteError::RunMissing { .. } => {
                Self::Query(e.to_string())
            }
        }
    }
}

impl From<SwitchError> for DesktopError {
    fn from(e: SwitchError) -> Self {
        match e {
            SwitchError::ReadOnly
            | SwitchError::RoleNotAllowed(_)
            | SwitchError::ConfirmationRequired(_)
            | SwitchError::InstancesCannotReachRedis(_)
            | SwitchError::NotAcknowledged { .. }
            | SwitchError::NotDrained(_)
            | SwitchError::RewriteNotClean(..)
            | SwitchError::ChangedMeanwhile { .. }
            | SwitchError::DriftAfterExit(_)
            | SwitchError::ExitFailed { .. } => Self::Refused(e.to_string()),
            SwitchError::NoReason => Self::Invalid(e.to_string()),
            SwitchError::RedisUnreachable(_) | SwitchError::ReadTimedOut(_) => Self::Connect(e.to_string()),
            SwitchError::Rewrite(..)
            | SwitchError::RewriteBatch { .. }
            | SwitchError::Corrupt(_)
            | SwitchError::Recon(_)
            | SwitchError::Db(_)
            | SwitchError::Redis(_) => Self::Query(e.to_string()),
        }
    }
}

impl From<DrillRunError> for DesktopError {
    fn from(e: DrillRunError) -> Self {
        match e {
            DrillRunError::ReadOnly | DrillRunError::RoleNotAllowed(_) => Self::Refused(e.to_string()),
            DrillRunError::NoReason
            | DrillRunError::NoNotes
            | DrillRunError::NoSuchRun(_)
            | DrillRunError::AlreadyFinished(_) => Self::Invalid(e.to_string()),
            DrillRunError::UnknownStatus(_) | DrillRunError::Db(_) => Self::Query(e.to_string()),
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
        match e {
            LaunchError::Refused(_) => Self::Refused(e.to_string()),
            LaunchError::Plan(_) | LaunchError::BadShort(_) => Self::Invalid(e.to_string()),
            LaunchError::BinaryMissing(_)
            | LaunchError::Spawn { .. }
            | LaunchError::Exited { .. }
            | LaunchError::NoRun { .. } => Self::Runner(e.to_string()),
            LaunchError::Runs(e) => e.into(),
        }
    }
}

impl From<stockguard_core::alerts::AlertError> for DesktopError {
    fn from(e: stockguard_core::alerts::AlertError) -> Self {
        use stockguard_core::alerts::AlertError as E;
        match e {
            E::ReadOnly | E::RoleNotAllowed(_) | E::AlreadyAcknowledged(_) => Self::Refused(e.to_string()),
            E::NoReason | E::NotFiring(_) => Self::Invalid(e.to_string()),
            E::Recon(_) | E::Switch(_) | E::Redis(_) | E::Db(_) => Self::Query(e.to_string()),
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
    fn a_read_only_profile_is_a_refusal_not_a_failure() {
        assert_eq!(DesktopError::from(RewriteError::ReadOnly).kind(), ErrorKind::Refused);
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
}
