//! Roles the servers enforce: a role is what the sale's MySQL and Redis let an account do,
//! not a word in a profile.
//!
//! The layout, in the order a roles file travels:
//!
//! - [`catalogue`]: the five roles (`viewer`, `oncall`, `approver`, `facilitator`, `admin`),
//!   each with its MySQL privileges on the sale's tables and its Redis ACL rules on the sale's
//!   keys, derived from what the code writes.
//! - [`spec`]: the roles file (`roles.toml`): which person gets which role under which MySQL
//!   account and Redis user; passwords come from the environment or are generated, never
//!   from the file.
//! - [`flavour`]: MariaDB or MySQL 8, read from `SELECT VERSION()`; `SET DEFAULT ROLE` differs.
//! - [`plan`]: the statements (MySQL roles, grants, accounts with their default role; Redis
//!   `ACL SETUSER`), computed without touching a server; passwords shown as `***`.
//! - [`apply`](mod@apply): runs a plan with an admin connection, idempotently, and audits it.
//! - [`grants`]: reading `SHOW GRANTS`, enough to say "may write table X".
//! - [`rights`]: the effective rights of a connection, per capability (read, rewrite,
//!   degrade, approve and execute compensation, run drills), with the reason when refused.

pub mod apply;
pub mod catalogue;
pub mod flavour;
pub mod grants;
pub mod plan;
pub mod rights;
pub mod spec;

pub use apply::{apply, Applied, NewPassword};
pub use catalogue::{Privilege, SaleRole};
pub use flavour::Flavour;
pub use plan::{plan, Account, Plan, PlannedRole, Server, Statement, Target, When};
pub use rights::{effective_rights, Reason, Right, Rights};
pub use spec::{Person, RolesSpec};

/// Errors of the roles layer; each says which step failed and what to do.
#[derive(Debug, thiserror::Error)]
pub enum RolesError {
    #[error("cannot read roles file {path}: {source}")]
    ReadSpec {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("roles file {path} is not valid: {reason}")]
    ParseSpec { path: String, reason: String },
    #[error("person `{0}` is named twice in the roles file")]
    DuplicatePerson(String),
    #[error("invalid {what} `{value}` in the roles file: use letters, digits, `_`, `-` or `.` (at most 32)")]
    InvalidName { what: &'static str, value: String },
    #[error("the password of `{person}` comes from ${var}, which is not set")]
    MissingPassword { person: String, var: String },
    #[error(
        "the password in ${var} (for `{person}`) holds a quote, a backslash or a control character; choose another"
    )]
    UnsafePassword { person: String, var: String },
    #[error("role name `{name}` is longer than {max} characters; set a shorter `role_prefix` in the roles file")]
    RoleNameTooLong { name: String, max: usize },
    #[error("the MySQL connection names no database; put the sale's database in the MySQL URL")]
    NoDatabase,
    #[error("the sale's tables are missing ({step}); run `stockguard migrate` first")]
    SchemaMissing {
        step: String,
        #[source]
        source: sqlx::Error,
    },
    #[error("the MySQL account may not do this ({step}); apply roles with an admin account, one that may CREATE ROLE, CREATE USER and GRANT")]
    MysqlNotAdmin {
        step: String,
        #[source]
        source: sqlx::Error,
    },
    #[error("the Redis user may not do this ({step}); apply roles with a user that may run ACL SETUSER")]
    RedisNotAdmin {
        step: String,
        #[source]
        source: redis::RedisError,
    },
    #[error("MySQL failed {step}: {source}")]
    Mysql {
        step: String,
        #[source]
        source: sqlx::Error,
    },
    #[error("Redis failed {step}: {source}")]
    Redis {
        step: String,
        #[source]
        source: redis::RedisError,
    },
}
