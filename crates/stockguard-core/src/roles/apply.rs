//! Running a plan on the sale's servers with an admin connection, idempotently, and leaving
//! an audit row.
//!
//! Which accounts exist is read first, once: a generated password is set only on an account
//! created by this run, so applying the same file twice changes nothing. A person whose role
//! changed loses the sale's other roles (`REVOKE`); their Redis user's rules are replaced
//! whole by `ACL SETUSER`. The SQL runs on a connection of its own with statement logging
//! off (statements carry passwords).

use std::collections::BTreeSet;

use secrecy::{ExposeSecret as _, SecretString};
use serde::Serialize;
use sqlx::ConnectOptions as _;
use sqlx::Connection as _;

use super::flavour::Flavour;
use super::plan::{Account, Plan, Server, When};
use super::spec::Password;
use super::RolesError;
use crate::audit::{self, AuditEntry};
use crate::connect::Connections;

/// A password generated for an account this run created: shown once, then only its holder
/// knows it.
#[derive(Debug, Clone)]
pub struct NewPassword {
    pub person: String,
    pub accounts: Vec<Account>,
    pub password: SecretString,
}

/// What an apply did.
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    /// The statements run, as people see them (passwords masked).
    pub ran: Vec<String>,
    /// Statements not run: a generated password for an account that already existed.
    pub skipped: usize,
    /// Accounts this run created.
    pub created: Vec<Account>,
    #[serde(skip)]
    pub new_passwords: Vec<NewPassword>,
    pub audit_id: u64,
}

/// MySQL error numbers of a refused privilege: 1044 database, 1045 login, 1142 table
/// command, 1227 "you need (at least one of) the ... privilege", 1410 "not allowed to create
/// a user with GRANT".
const ACCESS_DENIED: [u16; 5] = [1044, 1045, 1142, 1227, 1410];
/// MySQL `ER_NO_SUCH_TABLE`.
const NO_SUCH_TABLE: u16 = 1146;

fn mysql_error(step: String, source: sqlx::Error) -> RolesError {
    let number = source
        .as_database_error()
        .and_then(|d| d.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
        .map(|d| d.number());
    match number {
        Some(n) if ACCESS_DENIED.contains(&n) => RolesError::MysqlNotAdmin { step, source },
        Some(NO_SUCH_TABLE) => RolesError::SchemaMissing { step, source },
        _ => RolesError::Mysql { step, source },
    }
}

fn redis_error(step: String, source: redis::RedisError) -> RolesError {
    if source.code() == Some("NOPERM") {
        RolesError::RedisNotAdmin { step, source }
    } else {
        RolesError::Redis { step, source }
    }
}

/// Runs `plan` on the connection's servers (an admin account: it creates roles and users and
/// grants) and records one audit row, `roles.apply`, with `reason`.
#[tracing::instrument(skip_all, fields(database = %plan.target.database, persons = plan.persons.len()))]
pub async fn apply(plan: &Plan, conns: &Connections, reason: &str) -> Result<Applied, RolesError> {
    let options = conns.mysql.connect_options().as_ref().clone().disable_statement_logging();
    let mut mysql = sqlx::MySqlConnection::connect_with(&options)
        .await
        .map_err(|source| mysql_error("connecting to MySQL".into(), source))?;
    let mut redis = conns.redis.clone();

    let mut existing = BTreeSet::new();
    for person in &plan.persons {
        for account in std::iter::once(&person.mysql_account).chain(person.redis_account.as_ref()) {
            if exists(&mut mysql, &mut redis, account).await? {
                existing.insert(account.clone());
            }
        }
    }

    let result = match stale_roles(plan, &mut mysql).await {
        Ok(revokes) => run(plan, &mut mysql, &mut redis, &existing, &revokes).await,
        Err(e) => Err(e),
    };
    let _ = mysql.close().await;
    let (outcome, details) = match &result {
        Ok(applied) => ("APPLIED", serde_json::json!({ "ran": applied.ran.len(), "created": applied.created })),
        Err(e) => ("FAILED", serde_json::json!({ "error": e.to_string() })),
    };
    let persons: Vec<serde_json::Value> = plan
        .persons
        .iter()
        .map(|p| serde_json::json!({ "name": p.name, "role": p.role, "mysql": p.mysql_account, "redis": p.redis_account }))
        .collect();
    let mut details = details;
    details["persons"] = serde_json::Value::from(persons);
    details["flavour"] = serde_json::json!(plan.target.flavour);
    let entry = AuditEntry::by(&conns.settings, "roles.apply", &plan.target.database, reason, outcome, details);
    let audit_id = audit::record(&conns.mysql, &entry)
        .await
        .map_err(|source| mysql_error("recording the audit row".into(), source))?;
    result.map(|applied| Applied { audit_id, ..applied })
}

async fn run(
    plan: &Plan,
    mysql: &mut sqlx::MySqlConnection,
    redis: &mut crate::redis_link::RedisLink,
    existing: &BTreeSet<Account>,
    revokes: &[String],
) -> Result<Applied, RolesError> {
    let mut applied =
        Applied { ran: Vec::new(), skipped: 0, created: Vec::new(), new_passwords: Vec::new(), audit_id: 0 };
    for revoke in revokes {
        sqlx::raw_sql(revoke).execute(&mut *mysql).await.map_err(|e| mysql_error(format!("running `{revoke}`"), e))?;
        applied.ran.push(revoke.clone());
    }
    for statement in &plan.statements {
        let is_new = statement.account.as_ref().is_some_and(|a| !existing.contains(a));
        let runs = match statement.when {
            When::Always => true,
            When::AccountIsNew => is_new,
            When::AccountExists => !is_new,
        };
        if !runs {
            applied.skipped += 1;
            continue;
        }
        let step = format!("running `{}`", statement.text);
        match statement.server {
            Server::Mysql => {
                sqlx::raw_sql(&statement.sql_text()).execute(&mut *mysql).await.map_err(|e| mysql_error(step, e))?;
            }
            Server::Redis => {
                let _: () = redis::cmd("ACL")
                    .arg(&statement.redis_args()[1..])
                    .query_async(redis)
                    .await
                    .map_err(|e| redis_error(step, e))?;
            }
        }
        applied.ran.push(statement.text.clone());
    }
    for person in &plan.persons {
        let created: Vec<Account> = std::iter::once(&person.mysql_account)
            .chain(person.redis_account.as_ref())
            .filter(|a| !existing.contains(*a))
            .cloned()
            .collect();
        if let (Password::Generated(password), false) = (&person.password, created.is_empty()) {
            applied.new_passwords.push(NewPassword {
                person: person.name.clone(),
                accounts: created.clone(),
                password: SecretString::from(password.expose_secret().to_string()),
            });
        }
        applied.created.extend(created);
    }
    Ok(applied)
}

/// `REVOKE` statements for the sale's roles a person holds besides the one the file gives.
async fn stale_roles(plan: &Plan, mysql: &mut sqlx::MySqlConnection) -> Result<Vec<String>, RolesError> {
    // Whole tables read and filtered here: MariaDB's `mysql` tables will not always compare
    // their columns with a bound string (collations differ).
    let sql = match plan.target.flavour {
        Flavour::MariaDb => {
            "SELECT CAST(User AS CHAR), CAST(Host AS CHAR), CAST(Role AS CHAR) FROM mysql.roles_mapping"
        }
        Flavour::MySql => {
            "SELECT CAST(TO_USER AS CHAR), CAST(TO_HOST AS CHAR), CAST(FROM_USER AS CHAR) FROM mysql.role_edges"
        }
    };
    let held: Vec<(String, String, String)> = sqlx::query_as(sql)
        .fetch_all(&mut *mysql)
        .await
        .map_err(|e| mysql_error("reading which accounts hold which roles".into(), e))?;
    let sale_roles: BTreeSet<&str> = plan.roles.iter().map(|r| r.mysql_role.as_str()).collect();
    let mut revokes = Vec::new();
    for person in &plan.persons {
        let Account::Mysql { user, host } = &person.mysql_account else { continue };
        for (u, h, role) in &held {
            if u == user && h == host && sale_roles.contains(role.as_str()) && *role != person.mysql_role {
                revokes.push(format!("REVOKE `{role}` FROM '{user}'@'{host}'"));
            }
        }
    }
    Ok(revokes)
}

async fn exists(
    mysql: &mut sqlx::MySqlConnection,
    redis: &mut crate::redis_link::RedisLink,
    account: &Account,
) -> Result<bool, RolesError> {
    match account {
        Account::Mysql { user, host } => {
            let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM mysql.user WHERE User = ? AND Host = ?")
                .bind(user)
                .bind(host)
                .fetch_one(&mut *mysql)
                .await
                .map_err(|e| mysql_error(format!("looking up the MySQL account '{user}'@'{host}'"), e))?;
            Ok(n > 0)
        }
        Account::Redis { user } => {
            let found: redis::Value = redis::cmd("ACL")
                .arg("GETUSER")
                .arg(user)
                .query_async(redis)
                .await
                .map_err(|e| redis_error(format!("looking up the Redis user {user}"), e))?;
            Ok(!matches!(found, redis::Value::Nil))
        }
    }
}
