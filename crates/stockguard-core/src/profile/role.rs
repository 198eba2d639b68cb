//! The role a person says they act in, kept in their profile and recorded in every audit row.
//! A leaf: the profile, the role catalogue and the rule per action ([`crate::action`]) all
//! read it, and it reads none of them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The role the user acts in. What it may do is [`crate::action::Action`]'s rule, derived
/// from the role catalogue's grants; the servers enforce the same grants on its accounts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Role {
    /// On-call engineer: reconcile, rewrite, toggle degrade mode, acknowledge alerts, make
    /// and execute compensation.
    Oncall,
    /// Business approver: approves oversell compensation.
    Approver,
    /// Drill facilitator: runs and replays fault drills.
    Facilitator,
    /// Looks, changes nothing.
    Viewer,
    /// Everything the others may do, as the servers' admin accounts (and the local sandbox's
    /// root account) may; four eyes still hold, by the database's triggers.
    Admin,
}

impl Role {
    /// Every role, in the order a chooser lists them.
    pub const ALL: [Self; 5] = [Self::Oncall, Self::Approver, Self::Facilitator, Self::Viewer, Self::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Oncall => "oncall",
            Self::Approver => "approver",
            Self::Facilitator => "facilitator",
            Self::Viewer => "viewer",
            Self::Admin => "admin",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A role name that is none of [`Role::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown role `{0}`: use one of oncall, approver, facilitator, viewer, admin")]
pub struct UnknownRole(pub String);

impl FromStr for Role {
    type Err = UnknownRole;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL.into_iter().find(|r| r.as_str() == s.trim()).ok_or_else(|| UnknownRole(s.trim().to_string()))
    }
}
