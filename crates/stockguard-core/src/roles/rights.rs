//! What the connected accounts may do, read from the servers themselves: MySQL's
//! `CURRENT_USER()` and `SHOW GRANTS`, Redis's `ACL WHOAMI` and `ACL DRYRUN`.
//!
//! Nothing here fails because an account has few rights: a refusal becomes a reason, and
//! what the servers will not tell becomes "unknown".
//!
//! Only admin may run `ACL DRYRUN` (it tells one user's rights to anyone who asks). For the
//! others Redis is asked another way that changes nothing: on a connection of its own,
//! `MULTI`, the command, `DISCARD`. Redis checks a command's ACL when it is queued, so the
//! command answers `QUEUED` or NOPERM, and `DISCARD` drops it unrun.

use secrecy::ExposeSecret as _;
use serde::Serialize;

use super::catalogue::Privilege::{self, Insert, Select, Update};
use super::flavour::Flavour;
use super::grants::Grants;
use super::RolesError;
use crate::connect::Connections;

/// May the account do it? `allowed` is `None` when the servers would not tell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Right {
    pub allowed: Option<bool>,
    /// Why not (or why unknown); empty when allowed.
    pub reasons: Vec<Reason>,
}

/// Why a right is refused or unknown, typed, so a window says it in its own language; the
/// English sentence is its `Display`. `detail` is what a server said, verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Reason {
    /// The MySQL account has no such privilege on the table.
    MysqlPrivilege { account: String, privilege: String, table: String },
    /// MySQL would not show the account's grants.
    GrantsUnknown { detail: String },
    /// Redis would refuse the user the command.
    RedisRefused { user: String, command: String, detail: String },
    /// The Redis user cannot run `ACL WHOAMI`: who it is stays unknown.
    RedisWhoUnknown,
    /// Redis would not say whether the user may run the command.
    RedisUnknown { command: String, detail: String },
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::MysqlPrivilege { account, privilege, table } => {
                write!(f, "MySQL account {account} has no {privilege} on {table}")
            }
            Self::GrantsUnknown { detail } => {
                write!(f, "unknown, MySQL would not show the account's grants ({detail})")
            }
            Self::RedisRefused { user, command, detail } => write!(f, "Redis user {user} may not {command}: {detail}"),
            Self::RedisWhoUnknown => f.write_str("unknown, the Redis user cannot run ACL WHOAMI"),
            Self::RedisUnknown { command, detail } => {
                write!(f, "unknown, Redis would not say whether {command} is allowed ({detail})")
            }
        }
    }
}

/// The capabilities of a connection, each with its verdict.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Rights {
    /// `CURRENT_USER()`, e.g. `alice@%`.
    pub mysql_account: String,
    pub database: String,
    /// `ACL WHOAMI`, when the user may ask.
    pub redis_user: Option<String>,
    /// Readings, the board, the audit log.
    pub read: Right,
    /// The fenced rewrite of Redis stock.
    pub rewrite: Right,
    /// The degrade switch and its guided exit.
    pub degrade: Right,
    /// Approving or rejecting a proposed plan (a step on the case).
    pub approve_compensation: Right,
    /// Executing an approved plan: effects, outcomes, events, and the orders and stock they
    /// change. (Whether this person may execute this case, the triggers decide.)
    pub execute_compensation: Right,
    pub run_drills: Right,
    /// Acknowledging an alert (and closing acknowledgements whose alert cleared).
    pub acknowledge_alerts: Right,
}

/// One thing a capability needs.
#[derive(Debug, Clone, Copy)]
enum Need {
    Mysql(Privilege, &'static str),
    /// Redis `GET` of a stock key.
    RedisRead,
    /// Redis `SET` of a stock key.
    RedisWrite,
    /// Redis `SET` of a rewrite lock key.
    RedisLock,
}

use Need::{Mysql, RedisLock, RedisRead, RedisWrite};

const READ: &[Need] = &[
    Mysql(Select, "inventory"),
    Mysql(Select, "orders"),
    Mysql(Select, "outbox"),
    Mysql(Select, "audit_log"),
    RedisRead,
];
const REWRITE: &[Need] = &[
    Mysql(Select, "inventory"),
    Mysql(Insert, "rewrite_runs"),
    Mysql(Update, "rewrite_runs"),
    Mysql(Insert, "audit_log"),
    RedisWrite,
    RedisLock,
];
const DEGRADE: &[Need] = &[
    Mysql(Insert, "switch_changes"),
    Mysql(Insert, "degrade_switch"),
    Mysql(Update, "degrade_switch"),
    Mysql(Update, "switch_head"),
    Mysql(Insert, "rewrite_runs"),
    Mysql(Update, "rewrite_runs"),
    Mysql(Insert, "audit_log"),
    RedisWrite,
];
const APPROVE: &[Need] =
    &[Mysql(Select, "compensation_cases"), Mysql(Select, "compensation_lines"), Mysql(Insert, "compensation_verdicts")];
/// An effect row is the execution: its trigger, with its definer's rights, changes the order,
/// the stock, the line's outcome and writes the event.
const EXECUTE: &[Need] = &[Mysql(Insert, "compensation_steps"), Mysql(Insert, "compensation_effects")];
const DRILLS: &[Need] = &[
    Mysql(Insert, "drill_runs"),
    Mysql(Update, "drill_runs"),
    Mysql(Insert, "drill_events"),
    Mysql(Insert, "inventory"),
    Mysql(Insert, "orders"),
    Mysql(Update, "inventory"),
    Mysql(Insert, "audit_log"),
    RedisWrite,
];

const ACKNOWLEDGE: &[Need] = &[Mysql(Insert, "alert_acks"), Mysql(Update, "alert_acks"), Mysql(Insert, "audit_log")];

/// A yes, a no with its reason, or "cannot tell" with why.
#[derive(Debug, Clone)]
enum Answer {
    Yes,
    No(Reason),
    Unknown(Reason),
}

/// What the servers said, gathered once and asked per need.
struct Evidence {
    account: String,
    database: String,
    grants: Result<Grants, Reason>,
    redis_user: Option<String>,
    redis_read: Answer,
    redis_write: Answer,
    redis_lock: Answer,
}

impl Evidence {
    fn answer(&self, need: Need) -> Answer {
        match need {
            Mysql(privilege, table) => match &self.grants {
                Ok(g) if g.may(privilege, &self.database, table) => Answer::Yes,
                Ok(_) => Answer::No(Reason::MysqlPrivilege {
                    account: self.account.clone(),
                    privilege: privilege.to_string(),
                    table: table.to_string(),
                }),
                Err(why) => Answer::Unknown(why.clone()),
            },
            RedisRead => self.redis_read.clone(),
            RedisWrite => self.redis_write.clone(),
            RedisLock => self.redis_lock.clone(),
        }
    }

    fn right(&self, needs: &[Need]) -> Right {
        let answers: Vec<Answer> = needs.iter().map(|n| self.answer(*n)).collect();
        let refused: Vec<Reason> =
            answers.iter().filter_map(|a| if let Answer::No(r) = a { Some(r.clone()) } else { None }).collect();
        if !refused.is_empty() {
            return Right { allowed: Some(false), reasons: refused };
        }
        let mut unknown: Vec<Reason> =
            answers.iter().filter_map(|a| if let Answer::Unknown(r) = a { Some(r.clone()) } else { None }).collect();
        unknown.dedup();
        if unknown.is_empty() {
            Right { allowed: Some(true), reasons: Vec::new() }
        } else {
            Right { allowed: None, reasons: unknown }
        }
    }
}

/// The rights of the connection's MySQL account and Redis user on the sale.
///
/// Fails only when a server cannot be reached or will not say who is connected; a refusal of
/// `SHOW GRANTS` (or of both ways of asking Redis) makes the answers that depend on it unknown.
#[tracing::instrument(skip_all)]
pub async fn effective_rights(conns: &Connections) -> Result<Rights, RolesError> {
    let step = "asking MySQL who is connected";
    let (account, database, version): (String, Option<String>, String) =
        sqlx::query_as("SELECT CURRENT_USER(), DATABASE(), VERSION()")
            .fetch_one(&conns.mysql)
            .await
            .map_err(|source| RolesError::Mysql { step: step.into(), source })?;
    let database = database.ok_or(RolesError::NoDatabase)?;
    let grants = show_grants(&conns.mysql, Flavour::from_version(&version)).await;

    let mut redis = conns.redis.clone();
    let redis_user: Option<String> = redis::cmd("ACL").arg("WHOAMI").query_async(&mut redis).await.ok();
    let stock = conns.keys.stock(1);
    let lock = conns.keys.rewrite_lock(1);
    let (redis_read, redis_write, redis_lock) = match &redis_user {
        None => {
            let why = Answer::Unknown(Reason::RedisWhoUnknown);
            (why.clone(), why.clone(), why)
        }
        Some(user) => {
            let mut probe = Probe { conns, user, connection: None };
            (
                probe.ask(&mut redis, &["GET", &stock]).await,
                probe.ask(&mut redis, &["SET", &stock, "1"]).await,
                probe.ask(&mut redis, &["SET", &lock, "1", "NX", "PX", "1000"]).await,
            )
        }
    };
    let evidence = Evidence { account, database, grants, redis_user, redis_read, redis_write, redis_lock };
    Ok(Rights {
        read: evidence.right(READ),
        rewrite: evidence.right(REWRITE),
        degrade: evidence.right(DEGRADE),
        approve_compensation: evidence.right(APPROVE),
        execute_compensation: evidence.right(EXECUTE),
        run_drills: evidence.right(DRILLS),
        acknowledge_alerts: evidence.right(ACKNOWLEDGE),
        mysql_account: evidence.account,
        database: evidence.database,
        redis_user: evidence.redis_user,
    })
}

/// The account's grants, with those of its active roles. MariaDB's `SHOW GRANTS` lists the
/// active role's lines; MySQL 8 lists them only with `USING` the active roles.
async fn show_grants(pool: &sqlx::MySqlPool, flavour: Flavour) -> Result<Grants, Reason> {
    let unknown = |e: sqlx::Error| Reason::GrantsUnknown { detail: e.to_string() };
    let sql = match flavour {
        Flavour::MariaDb => "SHOW GRANTS".to_string(),
        Flavour::MySql => {
            let roles: Option<String> =
                sqlx::query_scalar("SELECT CURRENT_ROLE()").fetch_one(pool).await.map_err(unknown)?;
            show_grants_sql(roles.as_deref())
        }
    };
    let lines: Vec<String> = sqlx::raw_sql(&sql)
        .fetch_all(pool)
        .await
        .map_err(unknown)?
        .iter()
        .filter_map(|row| sqlx::Row::try_get::<String, _>(row, 0).ok())
        .collect();
    Ok(Grants::parse(&lines))
}

/// MySQL 8: `SHOW GRANTS FOR CURRENT_USER() USING <active roles>` (`CURRENT_ROLE()` lists
/// them as `` `r`@`%`,`s`@`%` ``, or `NONE`).
pub(crate) fn show_grants_sql(current_roles: Option<&str>) -> String {
    match current_roles.map(str::trim) {
        None | Some("") | Some("NONE") => "SHOW GRANTS FOR CURRENT_USER()".into(),
        Some(roles) => format!("SHOW GRANTS FOR CURRENT_USER() USING {roles}"),
    }
}

/// `ACL DRYRUN user <command...>`: "OK", or the reason Redis would refuse it; `None` when the
/// account may not run `ACL DRYRUN` itself.
async fn dry_run(redis: &mut crate::redis_link::RedisLink, user: &str, command: &[&str]) -> Option<Answer> {
    let reply: redis::RedisResult<redis::Value> =
        redis::cmd("ACL").arg("DRYRUN").arg(user).arg(command).query_async(redis).await;
    let what = format!("{} {}", command[0], command[1]);
    Some(match reply {
        Ok(redis::Value::Okay) => Answer::Yes,
        Ok(redis::Value::SimpleString(s)) if s == "OK" => Answer::Yes,
        Ok(redis::Value::BulkString(bytes)) => Answer::No(Reason::RedisRefused {
            user: user.into(),
            command: what,
            detail: String::from_utf8_lossy(&bytes).into_owned(),
        }),
        Ok(other) => {
            Answer::Unknown(Reason::RedisUnknown { command: what, detail: format!("ACL DRYRUN answered {other:?}") })
        }
        Err(e) if e.code() == Some("NOPERM") => return None,
        Err(e) => Answer::Unknown(Reason::RedisUnknown { command: what, detail: format!("ACL DRYRUN failed: {e}") }),
    })
}

/// Asks Redis whether the user may run a command: `ACL DRYRUN` when the user may run it,
/// else by queueing the command in a transaction and discarding it, on a connection of its
/// own (on a shared connection other callers' commands would be queued too).
struct Probe<'a> {
    conns: &'a Connections,
    user: &'a str,
    connection: Option<redis::aio::MultiplexedConnection>,
}

impl Probe<'_> {
    async fn ask(&mut self, redis: &mut crate::redis_link::RedisLink, command: &[&str]) -> Answer {
        match dry_run(redis, self.user, command).await {
            Some(answer) => answer,
            None => self.queue(command).await,
        }
    }

    async fn queue(&mut self, command: &[&str]) -> Answer {
        let what = format!("{} {}", command[0], command[1]);
        let unknown = |e: redis::RedisError| {
            Answer::Unknown(Reason::RedisUnknown {
                command: what.clone(),
                detail: format!("the account can run neither ACL DRYRUN nor MULTI: {e}"),
            })
        };
        if self.connection.is_none() {
            let url = self.conns.settings.redis_url.expose_secret();
            let opened = match redis::Client::open(url) {
                Ok(client) => client.get_multiplexed_async_connection().await,
                Err(e) => Err(e),
            };
            self.connection = Some(match opened {
                Ok(c) => c,
                Err(e) => return unknown(e),
            });
        }
        let Some(conn) = self.connection.as_mut() else {
            return Answer::Unknown(Reason::RedisUnknown {
                command: what.clone(),
                detail: "no connection to ask on".into(),
            });
        };
        // Without MULTI in force the command would run for real: stop at any doubt.
        if let Err(e) = redis::cmd("MULTI").query_async::<()>(conn).await {
            return unknown(e);
        }
        let queued: redis::RedisResult<redis::Value> =
            redis::cmd(command[0]).arg(&command[1..]).query_async(conn).await;
        if let Err(e) = redis::cmd("DISCARD").query_async::<()>(conn).await {
            // Whatever state the connection is in now, it is not used again.
            self.connection = None;
            return unknown(e);
        }
        match queued {
            Ok(_) => Answer::Yes,
            Err(e) if e.code() == Some("NOPERM") => Answer::No(Reason::RedisRefused {
                user: self.user.into(),
                command: what.clone(),
                detail: e.to_string(),
            }),
            Err(e) => unknown(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_8_shows_the_grants_of_the_active_roles() {
        assert_eq!(
            show_grants_sql(Some("`sg_sale_viewer`@`%`")),
            "SHOW GRANTS FOR CURRENT_USER() USING `sg_sale_viewer`@`%`"
        );
        assert_eq!(show_grants_sql(Some("NONE")), "SHOW GRANTS FOR CURRENT_USER()");
    }

    #[test]
    fn one_refusal_refuses_and_unknowns_only_leave_it_open() {
        let no_dryrun = Reason::RedisUnknown { command: "SET stock".into(), detail: "NOPERM".into() };
        let evidence = Evidence {
            account: "bob@%".into(),
            database: "sale".into(),
            grants: Ok(Grants::parse(&["GRANT SELECT ON `sale`.* TO `bob`@`%`"])),
            redis_user: Some("bob".into()),
            redis_read: Answer::Yes,
            redis_write: Answer::Unknown(no_dryrun.clone()),
            redis_lock: Answer::Unknown(no_dryrun.clone()),
        };
        let rewrite = evidence.right(REWRITE);
        assert_eq!(rewrite.allowed, Some(false));
        let insert = rewrite.reasons.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert!(insert.contains(&"MySQL account bob@% has no INSERT on rewrite_runs".to_string()), "{insert:?}");
        assert_eq!(evidence.right(READ).allowed, Some(true));
        let write_only_redis = [RedisWrite, RedisLock];
        let open = evidence.right(&write_only_redis);
        assert_eq!(open.allowed, None);
        assert_eq!(open.reasons, vec![no_dryrun], "one unknown, said once");
    }
}
