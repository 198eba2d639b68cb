//! The role catalogue: the five roles of a sale, and for each the MySQL privileges on the
//! sale's tables and the Redis ACL rules on the sale's keys.
//!
//! Grants are derived from what the code writes (the `INSERT`/`UPDATE` statements of
//! `rewrite/`, `switch/`, `drills/`, `audit/` and of the engine's drill runner), never
//! guessed from a role's name. Every role reads everything; writes are granted per table,
//! `admin`'s too: named privileges, never `ALL` (which would carry `DROP`, so `TRUNCATE`,
//! and `TRIGGER`, so dropping the triggers that hold the rules). `audit_log` is append-only
//! for every role, admin included: `INSERT` (and the `SELECT` every role has), never `UPDATE`
//! or `DELETE` (its triggers refuse those to anyone). No role writes `compensation_events`:
//! an event is born only from its effect, by the effect's trigger.
//!
//! Redis users are confined to the sale's prefix: every key command is checked against
//! `~prefix:*`, and the commands that reach past keys are taken away from every role, admin
//! included: `FUNCTION` (server-wide libraries), `SCAN`, `RANDOMKEY`, `DBSIZE` (other
//! applications' keys and their count), `FCALL`, and the `@dangerous` category (`KEYS`,
//! `FLUSHALL`, `CONFIG`, ...).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::profile::role::Role;

/// A role the servers enforce. The profile's [`Role`] is the role a person
/// says they act in; this is what their accounts may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SaleRole {
    /// Reads everything, writes nothing.
    Viewer,
    /// Reconciles, rewrites Redis stock, flips the degrade switch, halts drills, opens,
    /// plans and executes oversell compensation.
    Oncall,
    /// Approves or rejects oversell compensation plans (and writes notes on them).
    Approver,
    /// Runs fault drills: the drill tables, and what the drill's engines write, for drill rigs'
    /// products only.
    Facilitator,
    /// Every table of the sale, by named privileges (the workflow's and the audit log's rules
    /// hold for it too), and every command on the sale's keys.
    Admin,
}

impl SaleRole {
    pub const ALL: [Self; 5] = [Self::Viewer, Self::Oncall, Self::Approver, Self::Facilitator, Self::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Viewer => "viewer",
            Self::Oncall => "oncall",
            Self::Approver => "approver",
            Self::Facilitator => "facilitator",
            Self::Admin => "admin",
        }
    }
}

impl fmt::Display for SaleRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<Role> for SaleRole {
    fn from(role: Role) -> Self {
        match role {
            Role::Viewer => Self::Viewer,
            Role::Oncall => Self::Oncall,
            Role::Approver => Self::Approver,
            Role::Facilitator => Self::Facilitator,
            Role::Admin => Self::Admin,
        }
    }
}

/// A MySQL privilege the catalogue grants or a capability needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Privilege {
    Select,
    Insert,
    Update,
    Delete,
}

impl Privilege {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Select => "SELECT",
            Self::Insert => "INSERT",
            Self::Update => "UPDATE",
            Self::Delete => "DELETE",
        }
    }
}

impl fmt::Display for Privilege {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every table (and view) of the sale's schema (`migrations/*.sql`).
pub const TABLES: &[&str] = &[
    "inventory",
    "orders",
    "order_failures",
    "outbox",
    "switch_changes",
    "degrade_switch",
    "switch_head",
    "engine_heartbeats",
    "engine_instances",
    "rewrite_runs",
    "audit_log",
    "compensation_settings",
    "compensation_cases",
    "compensation_lines",
    "compensation_steps",
    "compensation_verdicts",
    "compensation_effects",
    "compensation_events",
    "drill_runs",
    "drill_events",
    "alert_acks",
    "adapter_baselines",
    "adapter_orders",
    // What the checkers approved (written by the workflow's trigger alone; no role writes it).
    "compensation_approved_orders",
    // Who holds which role, as `roles apply` last recorded it (its audit row, by the audit log's
    // trigger alone; no role writes it): the triggers that confine a facilitator to its drill
    // rigs' products and an approver to notes read it.
    "sale_role_accounts",
    // A view: the heartbeats of ended drill runs' engines, the only ones a facilitator or
    // on-call may delete (never a sale engine's, never a running drill's).
    "ended_rig_heartbeats",
];

use Privilege::{Delete, Insert, Update};

/// What on-call writes: the fenced rewrite (`rewrite_runs`), the degrade switch and its
/// guided exit (`switch_changes`, `degrade_switch`, `switch_head`; the exit rebuilds Redis
/// under a rewrite's fence), a drill's halt and review (`drill_runs`), hand corrections of the
/// ledger during an incident (`inventory`), and oversell compensation as its maker and its
/// executor: opening a case from the ledger (cases, lines, steps), planning its lines,
/// proposing, and executing an approved plan (effects, outcomes, `compensation.executed`
/// events, and the effect itself: an order cancelled, stock given back or added). Which
/// person may take which step of a case (the maker never executes) is the triggers' rule.
const ONCALL: &[(&str, &[Privilege])] = &[
    ("rewrite_runs", &[Insert, Update]),
    ("switch_changes", &[Insert]),
    ("degrade_switch", &[Insert, Update]),
    ("switch_head", &[Update]),
    ("drill_runs", &[Update]),
    ("inventory", &[Update]),
    ("orders", &[Update]),
    // Never UPDATE: only the triggers change a case (status, maker, approvals).
    ("compensation_cases", &[Insert]),
    ("compensation_lines", &[Insert, Update]),
    ("compensation_steps", &[Insert]),
    // An effect is the execution of its line; its trigger writes the outcome and the event.
    ("compensation_effects", &[Insert]),
    // Acknowledging an alert, and closing an acknowledgement whose alert cleared.
    ("alert_acks", &[Insert, Update]),
    // Recording (and, with a reason, re-recording) the baseline of a sale read over an adapter.
    ("adapter_baselines", &[Insert, Update]),
    // Opening a compensation case over an adapter: the sale's orders it names, written once.
    ("adapter_orders", &[Insert]),
    // Clearing what a dead drill left when on-call looks (its heartbeats; its run and rig row
    // through `drill_runs` and the switch above).
    ("ended_rig_heartbeats", &[Delete]),
    ("audit_log", &[Insert]),
];

/// What an approver writes: a verdict (approve or reject) in `compensation_verdicts`, the one
/// table no other role may write, whose trigger records the step and moves the case with its
/// own rights (refusing an approver's verdict on their own proposal); and notes. `INSERT` on
/// `compensation_steps` is for notes only: the steps' triggers refuse an approver's account any
/// other kind, and an approval or rejection step but the one its own verdict writes
/// (`migrations/20261207000031_four_eyes_rig_and_notes.sql`). No effect, no line: an approver
/// never executes.
const APPROVER: &[(&str, &[Privilege])] =
    &[("compensation_verdicts", &[Insert]), ("compensation_steps", &[Insert]), ("audit_log", &[Insert])];

/// What a drill writes. The runner records its run and timeline (`drill_runs`,
/// `drill_events`), puts the rig's products on sale (`inventory`), shortens payment
/// deadlines (`orders`), and starts engines with the facilitator's own credentials, so the
/// account also writes what engines write (orders, stock, outbox, failures, instances,
/// heartbeats), and leads the sale back from DB mode as on-call would (switch, rewrite).
/// The grants are per table; the triggers confine the ledger's rows (`inventory`, `orders`,
/// `outbox`, `order_failures`) to drill rigs' products (`inventory.rig` set): a facilitator's
/// account puts a product on sale only in a rig, never moves one into or out of a rig, and
/// writes no order, stock, price, release or failure of the sale's own products
/// (`migrations/20261207000031_four_eyes_rig_and_notes.sql`).
const FACILITATOR: &[(&str, &[Privilege])] = &[
    ("drill_runs", &[Insert, Update]),
    ("drill_events", &[Insert]),
    ("inventory", &[Insert, Update]),
    ("orders", &[Insert, Update]),
    ("outbox", &[Insert, Update]),
    ("order_failures", &[Insert]),
    ("engine_instances", &[Insert]),
    ("engine_heartbeats", &[Insert, Update]),
    // Never DELETE on `engine_heartbeats` (a live sale engine's could go while an exit waits
    // for it): only an ended run's engines' heartbeats, through this view.
    ("ended_rig_heartbeats", &[Delete]),
    ("rewrite_runs", &[Insert, Update]),
    ("switch_changes", &[Insert]),
    ("degrade_switch", &[Insert, Update]),
    ("switch_head", &[Update]),
    ("audit_log", &[Insert]),
];

/// What admin writes: the sale's operational tables whole (hand corrections of stock and
/// orders, the switch, engines, drills, alerts), the compensation threshold, and the workflow
/// tables as the people it separates write them (so its triggers decide for admin too: an
/// admin who plans does not approve or execute). The audit log stays append-only and no event
/// is written by hand; no DDL, no `DROP` (so no `TRUNCATE`), no `TRIGGER`.
const ADMIN: &[(&str, &[Privilege])] = &[
    ("inventory", &[Insert, Update, Delete]),
    ("orders", &[Insert, Update, Delete]),
    ("order_failures", &[Insert, Delete]),
    ("outbox", &[Insert, Update, Delete]),
    ("switch_changes", &[Insert]),
    ("degrade_switch", &[Insert, Update, Delete]),
    ("switch_head", &[Update]),
    ("engine_heartbeats", &[Insert, Update, Delete]),
    ("engine_instances", &[Insert, Update, Delete]),
    ("rewrite_runs", &[Insert, Update]),
    ("audit_log", &[Insert]),
    ("compensation_settings", &[Update]),
    ("compensation_cases", &[Insert]),
    ("compensation_lines", &[Insert, Update]),
    ("compensation_steps", &[Insert]),
    ("compensation_verdicts", &[Insert]),
    ("compensation_effects", &[Insert]),
    // Marking an event sent (its trigger allows only PENDING -> SENT).
    ("compensation_events", &[Update]),
    ("drill_runs", &[Insert, Update, Delete]),
    ("drill_events", &[Insert, Delete]),
    ("alert_acks", &[Insert, Update, Delete]),
    ("adapter_baselines", &[Insert, Update, Delete]),
    // Written once, never changed or deleted (its triggers refuse both to anyone).
    ("adapter_orders", &[Insert]),
    ("ended_rig_heartbeats", &[Delete]),
];

/// What a role may do on the sale's database: `SELECT` on the database, and these
/// privileges per table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MysqlGrants {
    ReadAnd(&'static [(&'static str, &'static [Privilege])]),
}

impl SaleRole {
    /// The role's MySQL privileges on the sale's database.
    pub fn mysql_grants(self) -> MysqlGrants {
        match self {
            Self::Viewer => MysqlGrants::ReadAnd(&[]),
            Self::Oncall => MysqlGrants::ReadAnd(ONCALL),
            Self::Approver => MysqlGrants::ReadAnd(APPROVER),
            Self::Facilitator => MysqlGrants::ReadAnd(FACILITATOR),
            Self::Admin => MysqlGrants::ReadAnd(ADMIN),
        }
    }

    /// The role's Redis ACL rules for keys under `prefix`, as `ACL SETUSER` arguments (after
    /// the user name, `reset`, `on` and the password).
    ///
    /// Readers get `+@read` and the scripting they need: the exact reading runs a Lua script,
    /// which redis-rs sends as `EVALSHA` (loading it with `SCRIPT LOAD` the first time), never
    /// as `EVALSHA_RO`. Redis checks every command a script calls against the caller's ACL, so
    /// `EVALSHA` is safe for a reader: a script that writes is refused with NOPERM inside the
    /// script. `EVALSHA_RO` is granted too, for readers that use it. Writers (on-call, and a
    /// facilitator, whose drill engines sell under the sale's prefix) get `+@read +@write`
    /// and the scripting; admin gets every command on the prefix but those that reach past
    /// it (below). Every role may ask `ACL WHOAMI`; none but admin may run `ACL DRYRUN` (it
    /// tells one user's rights to another).
    pub fn redis_rules(self, prefix: &str) -> Vec<String> {
        let keys = format!("~{prefix}:*");
        // Past the prefix: server-wide function libraries, the whole keyspace's names and size,
        // and `CLIENT TRACKING` (its BCAST mode sends every key name written on the server).
        let beyond_the_prefix =
            ["-function", "-fcall", "-fcall_ro", "-scan", "-randomkey", "-dbsize", "-client|tracking"]
                .into_iter()
                .map(String::from);
        let mut rules: Vec<&str> = match self {
            Self::Admin => {
                // Channels of the prefix only (never another application's, nor the server's
                // keyspace notifications), and no server-wide script command (`SCRIPT FLUSH`
                // empties every application's script cache, `SCRIPT KILL` stops theirs).
                let channels = format!("&{prefix}:*");
                return [keys.as_str(), channels.as_str(), "+@all", "-@dangerous", "+acl|dryrun", "+acl|whoami"]
                    .into_iter()
                    .chain(["-script|flush", "-script|kill"])
                    .map(String::from)
                    .chain(beyond_the_prefix)
                    .collect();
            }
            Self::Viewer | Self::Approver => vec!["+@read"],
            Self::Oncall | Self::Facilitator => vec!["+@read", "+@write"],
        };
        // `-@dangerous` after the categories (it takes back KEYS, FLUSHALL, CLIENT KILL, ...),
        // single commands after it.
        rules.extend([
            "+@connection",
            "-@dangerous",
            "+evalsha",
            "+evalsha_ro",
            "+script|load",
            "+script|exists",
            "+multi",
            "+exec",
            "+discard",
            "+acl|whoami",
        ]);
        std::iter::once(keys).chain(rules.into_iter().map(String::from)).chain(beyond_the_prefix).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_log_is_append_only_for_every_role_admin_included() {
        for role in SaleRole::ALL {
            let MysqlGrants::ReadAnd(tables) = role.mysql_grants();
            for (table, privileges) in tables {
                if *table == "audit_log" {
                    assert_eq!(*privileges, &[Insert], "{role}");
                }
            }
        }
    }

    #[test]
    fn no_role_writes_a_compensation_event_or_changes_a_case_row_itself() {
        for role in SaleRole::ALL {
            let MysqlGrants::ReadAnd(tables) = role.mysql_grants();
            for (table, privileges) in tables {
                if *table == "compensation_events" {
                    assert!(!privileges.contains(&Insert), "{role} inserts events");
                }
                if *table == "compensation_cases" {
                    assert_eq!(*privileges, &[Insert], "{role}");
                }
            }
        }
    }

    #[test]
    fn no_redis_user_may_reach_past_the_sales_prefix() {
        for role in SaleRole::ALL {
            let rules = role.redis_rules("sg");
            assert_eq!(rules[0], "~sg:*", "{role}");
            for taken in ["-function", "-scan", "-randomkey", "-dbsize", "-@dangerous", "-client|tracking"] {
                assert!(rules.iter().any(|r| r == taken), "{role} lacks {taken}: {rules:?}");
            }
        }
    }

    #[test]
    fn every_granted_table_is_in_the_schema() {
        for role in SaleRole::ALL {
            let MysqlGrants::ReadAnd(tables) = role.mysql_grants();
            for (table, _) in tables {
                assert!(TABLES.contains(table), "{role}: {table}");
            }
        }
    }

    #[test]
    fn readers_may_not_write_redis_keys() {
        let rules = SaleRole::Viewer.redis_rules("sg");
        assert_eq!(rules[0], "~sg:*");
        assert!(rules.contains(&"+@read".to_string()) && !rules.iter().any(|r| r == "+@write"));
        assert!(SaleRole::Oncall.redis_rules("sg").contains(&"+@write".to_string()));
    }
}
