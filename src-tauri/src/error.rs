//! The error the window receives: a kind it can branch on and a message a person can act on.

use serde::Serialize;

#[derive(Debug, thiserror::Error, Serialize)]
#[serde(tag = "kind", content = "message", rename_all = "camelCase")]
pub enum DesktopError {
    /// No usable profile, or a bad one.
    #[error("{0}")]
    Profile(String),
    /// A server could not be reached or refused us.
    #[error("{0}")]
    Connect(String),
    /// A query failed.
    #[error("{0}")]
    Query(String),
}

impl From<stockguard::profile::ProfileError> for DesktopError {
    fn from(e: stockguard::profile::ProfileError) -> Self {
        Self::Profile(e.to_string())
    }
}

impl From<stockguard::connect::ConnectError> for DesktopError {
    fn from(e: stockguard::connect::ConnectError) -> Self {
        Self::Connect(e.to_string())
    }
}

impl From<stockguard::recon::ReconError> for DesktopError {
    fn from(e: stockguard::recon::ReconError) -> Self {
        Self::Query(e.to_string())
    }
}
