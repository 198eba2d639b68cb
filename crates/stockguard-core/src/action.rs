//! Who may do what: one rule per action, asked by every door (the CLI, the desktop app, the
//! drill runner) through [`crate::profile::ConnectionSettings::may`].
//!
//! The rule is not a second list beside the role catalogue: an action names the tables it
//! writes (and whether it writes Redis), and a role may take it when the catalogue grants
//! that role every one of those writes. So the console refuses exactly what the servers would
//! refuse an account of that role, up front and in words, instead of a "query failed" after
//! half a step. A read-only profile takes no action at all.
//!
//! A leaf: it reads the profile's [`Role`] and the catalogue, nothing that uses it.

use std::fmt;

use serde::Serialize;

use crate::profile::role::Role;
use crate::roles::catalogue::{MysqlGrants, Privilege, SaleRole};

use Privilege::{Insert, Update};

/// Something a person does to a sale that the console checks before trying.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Action {
    /// The locked, fenced rewrite of Redis stock.
    RewriteStock,
    /// Turning degrade mode on or off, and the guided exit (which rebuilds Redis under a
    /// rewrite's fence).
    ChangeSwitch,
    /// Acknowledging a firing alert (and closing the acknowledgement when it clears).
    AcknowledgeAlert,
    /// Starting a fault drill: its run, its timeline and its rig's products and engines.
    RunDrill,
    /// Asking the running drills to halt.
    HaltDrill,
    /// Writing a finished drill's review notes.
    ReviewDrill,
    /// Recording (or, with a reason, re-recording) the baselines of a sale read over an
    /// adapter, in the state database.
    RecordBaselines,
}

impl Action {
    /// Every action, for the tests that hold the rule to the grants and for a rights table.
    pub const ALL: [Self; 7] = [
        Self::RewriteStock,
        Self::ChangeSwitch,
        Self::AcknowledgeAlert,
        Self::RunDrill,
        Self::HaltDrill,
        Self::ReviewDrill,
        Self::RecordBaselines,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::RewriteStock => "rewrite_stock",
            Self::ChangeSwitch => "change_switch",
            Self::AcknowledgeAlert => "acknowledge_alert",
            Self::RunDrill => "run_drill",
            Self::HaltDrill => "halt_drill",
            Self::ReviewDrill => "review_drill",
            Self::RecordBaselines => "record_baselines",
        }
    }

    /// What the action writes in the sale's database, as the code's statements do (every
    /// action also appends to `audit_log`, which every role may).
    pub fn writes(self) -> &'static [(&'static str, Privilege)] {
        match self {
            Self::RewriteStock => &[("rewrite_runs", Insert), ("rewrite_runs", Update)],
            Self::ChangeSwitch => &[
                ("switch_changes", Insert),
                ("degrade_switch", Insert),
                ("degrade_switch", Update),
                ("switch_head", Update),
                ("rewrite_runs", Insert),
                ("rewrite_runs", Update),
            ],
            Self::AcknowledgeAlert => &[("alert_acks", Insert), ("alert_acks", Update)],
            // The runner records its run and timeline, puts its rig's products on sale and
            // starts engines that sell with the same account.
            Self::RunDrill => &[
                ("drill_runs", Insert),
                ("drill_runs", Update),
                ("drill_events", Insert),
                ("inventory", Insert),
                ("orders", Insert),
                ("outbox", Insert),
                ("engine_heartbeats", Insert),
            ],
            Self::HaltDrill | Self::ReviewDrill => &[("drill_runs", Update)],
            // An upsert: a product baselined again has its row updated.
            Self::RecordBaselines => &[("adapter_baselines", Insert), ("adapter_baselines", Update)],
        }
    }

    /// Whether the action writes the sale's Redis keys (the rewrite, the exit's rebuild, a
    /// drill's engines).
    pub fn writes_redis(self) -> bool {
        matches!(self, Self::RewriteStock | Self::ChangeSwitch | Self::RunDrill)
    }

    /// The rule: `role` may take this action when the catalogue grants it every write the
    /// action makes.
    pub fn allowed_for(self, role: Role) -> bool {
        let role = SaleRole::from(role);
        let MysqlGrants::ReadAnd(grants) = role.mysql_grants();
        let granted = |table: &str, privilege: Privilege| {
            grants.iter().any(|(t, privileges)| *t == table && privileges.contains(&privilege))
        };
        let redis_ok = !self.writes_redis() || role.redis_rules("p").iter().any(|r| r == "+@write" || r == "+@all");
        redis_ok && self.writes().iter().all(|(table, privilege)| granted(table, *privilege))
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::RewriteStock => "rewrite Redis stock",
            Self::ChangeSwitch => "change the degrade switch",
            Self::AcknowledgeAlert => "acknowledge alerts",
            Self::RunDrill => "run drills",
            Self::HaltDrill => "halt drills",
            Self::ReviewDrill => "review drills",
            Self::RecordBaselines => "record adapter baselines",
        })
    }
}

/// Why the console will not take an action for this profile: the one refusal every door
/// words (the CLI by its `Display`, the desktop by its `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Refused {
    /// The profile is marked read-only.
    #[error("this profile is read-only: it may not {action}")]
    ReadOnly { action: Action },
    /// The role's grants do not cover the action.
    #[error("the {role} role may not {action}; {}", who_may(*action))]
    Role { role: Role, action: Action },
}

/// The roles that may, in words: "on-call and admin may".
fn who_may(action: Action) -> String {
    let roles: Vec<&str> = Role::ALL.into_iter().filter(|r| action.allowed_for(*r)).map(Role::as_str).collect();
    format!("{} may", roles.join(" and "))
}

/// The rule for a profile's role and read-only mark.
pub fn may(role: Role, read_only: bool, action: Action) -> Result<(), Refused> {
    if read_only {
        return Err(Refused::ReadOnly { action });
    }
    if action.allowed_for(role) {
        Ok(())
    } else {
        Err(Refused::Role { role, action })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule, as people are told it: held here so that a change to the catalogue that
    /// moves a right shows up as a change to this table, on purpose.
    #[test]
    fn each_role_may_take_the_actions_its_grants_cover_and_no_other() {
        use Action::*;
        use Role::*;
        let expected: &[(Role, &[Action])] = &[
            (Oncall, &[RewriteStock, ChangeSwitch, AcknowledgeAlert, HaltDrill, ReviewDrill, RecordBaselines]),
            (Facilitator, &[RewriteStock, ChangeSwitch, RunDrill, HaltDrill, ReviewDrill]),
            (Approver, &[]),
            (Viewer, &[]),
            (Admin, &Action::ALL),
        ];
        for (role, may_take) in expected {
            for action in Action::ALL {
                assert_eq!(action.allowed_for(*role), may_take.contains(&action), "{role} / {action}");
            }
        }
    }

    #[test]
    fn a_facilitator_viewer_or_approver_is_refused_an_alert_acknowledgement_by_role() {
        for role in [Role::Facilitator, Role::Viewer, Role::Approver] {
            assert_eq!(
                may(role, false, Action::AcknowledgeAlert),
                Err(Refused::Role { role, action: Action::AcknowledgeAlert })
            );
        }
        assert_eq!(may(Role::Oncall, false, Action::AcknowledgeAlert), Ok(()));
    }

    #[test]
    fn a_read_only_profile_takes_no_action_whatever_its_role() {
        for role in Role::ALL {
            for action in Action::ALL {
                assert_eq!(may(role, true, action), Err(Refused::ReadOnly { action }));
            }
        }
    }

    #[test]
    fn a_refusal_names_who_may() {
        let refused = may(Role::Facilitator, false, Action::AcknowledgeAlert).unwrap_err();
        assert_eq!(refused.to_string(), "the facilitator role may not acknowledge alerts; oncall and admin may");
    }
}
