//! From a roles file to the statements that make the servers enforce it: MySQL roles with
//! their grants, one account per person with its role as the default, Redis ACL users.
//!
//! A plan is computed without touching a server (the [`Target`] says which database, which
//! server flavour and which key prefix); [`super::apply`] runs it. Passwords are held in the
//! plan as secrets and shown as `***`.

use secrecy::{ExposeSecret as _, SecretString};
use serde::Serialize;

use super::catalogue::{MysqlGrants, SaleRole};
use super::flavour::Flavour;
use super::spec::{Password, RolesSpec};
use super::RolesError;
use crate::connect::Connections;

/// MySQL 8 keeps user and role names to 32 characters; MariaDB allows more, but one limit
/// keeps a roles file valid on both.
pub const MAX_ROLE_NAME: usize = 32;

/// Where the roles go: the sale's database, its server flavour and its Redis key prefix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target {
    pub database: String,
    pub flavour: Flavour,
    pub key_prefix: String,
}

impl Target {
    /// The connection's database, server flavour and key prefix.
    pub async fn of(conns: &Connections) -> Result<Self, RolesError> {
        let step = "asking MySQL for its database and version";
        let (database, version): (Option<String>, String) = sqlx::query_as("SELECT DATABASE(), VERSION()")
            .fetch_one(&conns.mysql)
            .await
            .map_err(|source| RolesError::Mysql { step: step.into(), source })?;
        let database = database.ok_or(RolesError::NoDatabase)?;
        Ok(Self { database, flavour: Flavour::from_version(&version), key_prefix: conns.keys.prefix().to_string() })
    }
}

/// Which server a statement goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Server {
    Mysql,
    Redis,
}

/// When a statement runs: a generated password is set only on an account being created, so
/// applying a plan twice changes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum When {
    Always,
    AccountIsNew,
    AccountExists,
}

/// An account a statement depends on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "server", rename_all = "lowercase")]
pub enum Account {
    Mysql { user: String, host: String },
    Redis { user: String },
}

#[derive(Debug, Clone)]
enum Piece {
    Text(String),
    /// A password; `shown` is what people see instead.
    Secret {
        value: SecretString,
        shown: &'static str,
    },
}

/// One statement: SQL text, or one Redis command as its arguments.
#[derive(Debug, Clone, Serialize)]
pub struct Statement {
    pub server: Server,
    pub when: When,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<Account>,
    /// The statement as people see it: passwords as `***`.
    pub text: String,
    #[serde(skip)]
    pieces: Vec<Piece>,
}

impl Statement {
    fn new(server: Server, when: When, account: Option<Account>, pieces: Vec<Piece>) -> Self {
        let shown: Vec<String> = pieces
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.clone(),
                Piece::Secret { shown, .. } => (*shown).to_string(),
            })
            .collect();
        let text = match server {
            Server::Mysql => shown.concat(),
            Server::Redis => shown.join(" "),
        };
        Self { server, when, account, text, pieces }
    }

    fn sql(text: String) -> Self {
        Self::new(Server::Mysql, When::Always, None, vec![Piece::Text(text)])
    }

    /// The SQL to run, passwords in.
    pub(crate) fn sql_text(&self) -> String {
        self.exposed().concat()
    }

    /// The Redis command's arguments, passwords in.
    pub(crate) fn redis_args(&self) -> Vec<String> {
        self.exposed()
    }

    fn exposed(&self) -> Vec<String> {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.clone(),
                Piece::Secret { value, .. } => value.expose_secret().to_string(),
            })
            .collect()
    }
}

/// A person as planned: their role, accounts and password.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedPerson {
    pub name: String,
    pub role: SaleRole,
    pub mysql_role: String,
    pub mysql_account: Account,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redis_account: Option<Account>,
    /// `env:VAR` or `generated`.
    pub password_source: String,
    #[serde(skip)]
    pub(crate) password: Password,
}

/// A role of the catalogue and its name on the MySQL server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedRole {
    pub role: SaleRole,
    pub mysql_role: String,
}

/// Everything to run, in order.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub target: Target,
    /// Each role of the catalogue and its MySQL role name.
    pub roles: Vec<PlannedRole>,
    pub persons: Vec<PlannedPerson>,
    pub statements: Vec<Statement>,
}

/// The MySQL role name of a role for a sale.
pub fn role_name(prefix: &str, role: SaleRole) -> String {
    format!("{prefix}_{}", role.as_str())
}

/// The role prefix: the file's, or `sg_<database>` (letters, digits and `_` only).
fn role_prefix(spec: &RolesSpec, database: &str) -> String {
    spec.role_prefix.clone().unwrap_or_else(|| {
        let db: String = database.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        format!("sg_{db}")
    })
}

fn ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// A database name in a database-level grant, where `_` and `%` are wildcards: escaped, so
/// that `sale_eu` does not also grant on `saleXeu`. Servers refuse a pattern longer than a
/// name may be (64), so a name whose escaped form is longer is granted as it is.
fn db_pattern(name: &str) -> String {
    let escaped = name.replace('\\', "\\\\").replace('_', "\\_").replace('%', "\\%");
    ident(if escaped.chars().count() <= 64 { &escaped } else { name })
}

fn account(user: &str, host: &str) -> String {
    // Names were checked against a safe alphabet when the file was read.
    format!("'{user}'@'{host}'")
}

fn password_piece(password: &Password, shown: &'static str, prefix: &str) -> Piece {
    let value = match password {
        Password::FromEnv { value, .. } | Password::Generated(value) => value.expose_secret(),
    };
    Piece::Secret { value: SecretString::from(format!("{prefix}{value}")), shown }
}

/// The statements for a roles file. `env` looks up the environment variables the file names
/// for passwords; a person without one gets a generated password.
pub fn plan(spec: &RolesSpec, target: &Target, env: &dyn Fn(&str) -> Option<String>) -> Result<Plan, RolesError> {
    let prefix = role_prefix(spec, &target.database);
    let roles: Vec<PlannedRole> =
        SaleRole::ALL.iter().map(|r| PlannedRole { role: *r, mysql_role: role_name(&prefix, *r) }).collect();
    if let Some(long) = roles.iter().find(|r| r.mysql_role.len() > MAX_ROLE_NAME) {
        return Err(RolesError::RoleNameTooLong { name: long.mysql_role.clone(), max: MAX_ROLE_NAME });
    }
    let db = ident(&target.database);
    let mut statements = Vec::new();
    for PlannedRole { role, mysql_role } in &roles {
        let r = ident(mysql_role);
        statements.push(Statement::sql(format!("CREATE ROLE IF NOT EXISTS {r}")));
        // The role's grants are the catalogue's and nothing else: what an older catalogue
        // granted (admin's `ALL`, on-call's `INSERT` on events) goes first. Between this and
        // the grants below the role holds nothing, for the milliseconds an apply takes.
        statements.push(Statement::sql(format!("REVOKE ALL PRIVILEGES, GRANT OPTION FROM {r}")));
        let MysqlGrants::ReadAnd(tables) = role.mysql_grants();
        statements.push(Statement::sql(format!("GRANT SELECT ON {}.* TO {r}", db_pattern(&target.database))));
        for (table, privileges) in tables {
            let privileges: Vec<&str> = privileges.iter().map(|p| p.as_str()).collect();
            statements.push(Statement::sql(format!("GRANT {} ON {db}.{} TO {r}", privileges.join(", "), ident(table))));
        }
    }

    let mut persons = Vec::new();
    for person in &spec.persons {
        let password = person.password(env)?;
        let mysql_role = role_name(&prefix, person.role);
        let who = account(&person.mysql_user, &person.mysql_host);
        let mysql_account = Account::Mysql { user: person.mysql_user.clone(), host: person.mysql_host.clone() };
        let create = |when| {
            Statement::new(
                Server::Mysql,
                when,
                Some(mysql_account.clone()),
                vec![
                    Piece::Text(format!("CREATE USER IF NOT EXISTS {who} IDENTIFIED BY '")),
                    password_piece(&password, "***", ""),
                    Piece::Text("'".into()),
                ],
            )
        };
        match &password {
            Password::FromEnv { .. } => {
                statements.push(create(When::Always));
                statements.push(Statement::new(
                    Server::Mysql,
                    When::Always,
                    Some(mysql_account.clone()),
                    vec![
                        Piece::Text(format!("ALTER USER {who} IDENTIFIED BY '")),
                        password_piece(&password, "***", ""),
                        Piece::Text("'".into()),
                    ],
                ));
            }
            Password::Generated(_) => statements.push(create(When::AccountIsNew)),
        }
        statements.push(Statement::sql(format!("GRANT {} TO {who}", ident(&mysql_role))));
        statements.push(Statement::sql(format!(
            "SET DEFAULT ROLE {} {} {who}",
            ident(&mysql_role),
            target.flavour.default_role_keyword()
        )));

        let redis_account = person.redis_user.as_ref().map(|user| Account::Redis { user: user.clone() });
        if let Some(user) = &person.redis_user {
            let rules = person.role.redis_rules(&target.key_prefix);
            let with_password = |when| {
                let mut pieces: Vec<Piece> =
                    ["ACL", "SETUSER", user, "reset", "on"].into_iter().map(|t| Piece::Text(t.to_string())).collect();
                pieces.push(password_piece(&password, ">***", ">"));
                pieces.extend(rules.iter().cloned().map(Piece::Text));
                Statement::new(Server::Redis, when, redis_account.clone(), pieces)
            };
            match &password {
                Password::FromEnv { .. } => statements.push(with_password(When::Always)),
                Password::Generated(_) => {
                    statements.push(with_password(When::AccountIsNew));
                    // An existing user keeps the password it was given when it was created.
                    let mut pieces: Vec<Piece> =
                        ["ACL", "SETUSER", user, "resetkeys", "resetchannels", "clearselectors", "-@all", "on"]
                            .into_iter()
                            .map(|t| Piece::Text(t.to_string()))
                            .collect();
                    pieces.extend(rules.iter().cloned().map(Piece::Text));
                    statements.push(Statement::new(Server::Redis, When::AccountExists, redis_account.clone(), pieces));
                }
            }
        }

        persons.push(PlannedPerson {
            name: person.name.clone(),
            role: person.role,
            mysql_role,
            mysql_account,
            redis_account,
            password_source: match &password {
                Password::FromEnv { var, .. } => format!("env:{var}"),
                Password::Generated(_) => "generated".into(),
            },
            password,
        });
    }
    Ok(Plan { target: target.clone(), roles, persons, statements })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> RolesSpec {
        let bob = "[[person]]\nname = \"bob\"\nrole = \"viewer\"\nmysql_user = \"bob\"\nmysql_host = \"10.0.%\"\n";
        RolesSpec::parse(&format!("{}\n{bob}", crate::roles::spec::EXAMPLE), "roles.toml").unwrap()
    }

    fn target(flavour: Flavour) -> Target {
        Target { database: "sale_eu".into(), flavour, key_prefix: "sg".into() }
    }

    fn env(var: &str) -> Option<String> {
        (var == "ALICE_PW").then(|| "pw-of-alice".to_string())
    }

    fn texts(plan: &Plan) -> Vec<&str> {
        plan.statements.iter().map(|s| s.text.as_str()).collect()
    }

    #[test]
    fn mysql_8_sets_the_default_role_to_the_account() {
        let plan = plan(&spec(), &target(Flavour::MySql), &env).unwrap();
        let texts = texts(&plan);
        assert!(texts.contains(&"CREATE ROLE IF NOT EXISTS `sg_sale_approver`"));
        assert!(texts.contains(&"GRANT `sg_sale_approver` TO 'alice'@'%'"));
        assert!(texts.contains(&"SET DEFAULT ROLE `sg_sale_approver` TO 'alice'@'%'"));
        assert!(texts.contains(&"SET DEFAULT ROLE `sg_sale_viewer` TO 'bob'@'10.0.%'"));
    }

    #[test]
    fn mariadb_sets_the_default_role_for_the_account() {
        let plan = plan(&spec(), &target(Flavour::MariaDb), &env).unwrap();
        assert!(texts(&plan).contains(&"SET DEFAULT ROLE `sg_sale_approver` FOR 'alice'@'%'"));
    }

    #[test]
    fn grants_escape_wildcards_in_the_database_name_and_keep_audit_append_only() {
        let plan = plan(&spec(), &target(Flavour::MariaDb), &env).unwrap();
        let texts = texts(&plan);
        assert!(texts.contains(&"GRANT SELECT ON `sale\\_eu`.* TO `sg_sale_viewer`"));
        assert!(texts.contains(&"GRANT SELECT ON `sale\\_eu`.* TO `sg_sale_admin`"));
        assert!(!texts.iter().any(|t| t.starts_with("GRANT ALL")), "admin's rights are named");
        assert!(texts.contains(&"GRANT INSERT ON `sale_eu`.`audit_log` TO `sg_sale_oncall`"));
        assert!(!texts.iter().any(|t| t.contains("`audit_log`") && (t.contains("UPDATE") || t.contains("DELETE"))));
    }

    #[test]
    fn passwords_are_masked_in_what_people_see_and_present_in_what_runs() {
        let plan = plan(&spec(), &target(Flavour::MariaDb), &env).unwrap();
        assert!(!plan.statements.iter().any(|s| s.text.contains("pw-of-alice")));
        let create = plan.statements.iter().find(|s| s.text.starts_with("CREATE USER IF NOT EXISTS 'alice'")).unwrap();
        assert_eq!(create.text, "CREATE USER IF NOT EXISTS 'alice'@'%' IDENTIFIED BY '***'");
        assert!(create.sql_text().ends_with("IDENTIFIED BY 'pw-of-alice'"));
        let acl = plan.statements.iter().find(|s| s.server == Server::Redis).unwrap();
        assert!(acl.text.starts_with("ACL SETUSER alice reset on >*** ~sg:* +@read"), "{}", acl.text);
        assert!(acl.redis_args().contains(&">pw-of-alice".to_string()));
        let json = serde_json::to_string(&plan).unwrap();
        assert!(!json.contains("pw-of-alice"));
    }

    #[test]
    fn a_generated_password_is_set_only_on_a_new_account() {
        let plan = plan(&spec(), &target(Flavour::MariaDb), &env).unwrap();
        let bob: Vec<&Statement> = plan
            .statements
            .iter()
            .filter(|s| matches!(&s.account, Some(Account::Mysql { user, .. }) if user == "bob"))
            .collect();
        assert_eq!(bob.len(), 1);
        assert_eq!(bob[0].when, When::AccountIsNew);
    }

    #[test]
    fn a_role_name_too_long_for_mysql_is_refused() {
        let mut spec = spec();
        spec.role_prefix = None;
        let t = Target { database: "a_database_name_that_is_long".into(), ..target(Flavour::MySql) };
        assert!(matches!(plan(&spec, &t, &env), Err(RolesError::RoleNameTooLong { .. })));
    }
}
