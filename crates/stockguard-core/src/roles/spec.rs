//! The roles file (`roles.toml`): who gets which role, and under which accounts.
//!
//! ```toml
//! # Optional: the MySQL role names are `<role_prefix>_<role>` (default `sg_<database>`), so
//! # that several sales on one server keep their roles apart.
//! role_prefix = "sg_sale"
//!
//! [[person]]
//! name = "alice"
//! role = "approver"
//! mysql_user = "alice"
//! mysql_host = "%"                # default "%"
//! redis_user = "alice"            # optional: no Redis account without it
//! password_env = "ALICE_PASSWORD" # optional: without it a password is generated
//! ```
//!
//! Passwords are never in the file: a person's password comes from the environment variable
//! the file names, or is generated, set when the account is created and printed once.

use std::path::Path;

use secrecy::SecretString;
use serde::{Deserialize, Serialize};

use super::catalogue::SaleRole;
use super::RolesError;

/// The parsed roles file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolesSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role_prefix: Option<String>,
    #[serde(default, rename = "person")]
    pub persons: Vec<Person>,
}

/// One person and their accounts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Person {
    pub name: String,
    pub role: SaleRole,
    pub mysql_user: String,
    #[serde(default = "any_host")]
    pub mysql_host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redis_user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_env: Option<String>,
}

fn any_host() -> String {
    "%".into()
}

/// Where a person's password came from.
#[derive(Debug, Clone)]
pub enum Password {
    /// From the environment variable the file names: set on every apply (the same value
    /// changes nothing).
    FromEnv { var: String, value: SecretString },
    /// Generated for this plan: set only on an account that does not exist yet.
    Generated(SecretString),
}

impl RolesSpec {
    /// Parses roles-file text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, RolesError> {
        // The message only, never the parser's excerpt of the file: a line it quotes may be a
        // password someone put in by mistake.
        let spec: Self = toml::from_str(text)
            .map_err(|e| RolesError::ParseSpec { path: origin.to_string(), reason: e.message().to_string() })?;
        spec.validate()?;
        Ok(spec)
    }

    /// Reads and parses a roles file.
    pub fn load(path: &Path) -> Result<Self, RolesError> {
        let origin = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|source| RolesError::ReadSpec { path: origin.clone(), source })?;
        Self::parse(&text, &origin)
    }

    fn validate(&self) -> Result<(), RolesError> {
        if let Some(prefix) = &self.role_prefix {
            check_name("role_prefix", prefix)?;
        }
        let mut seen = std::collections::BTreeSet::new();
        for p in &self.persons {
            if !seen.insert(p.name.as_str()) {
                return Err(RolesError::DuplicatePerson(p.name.clone()));
            }
            check_name("mysql_user", &p.mysql_user)?;
            check_host(&p.mysql_host)?;
            if let Some(user) = &p.redis_user {
                check_name("redis_user", user)?;
            }
        }
        Ok(())
    }
}

impl Person {
    /// The person's password: from the environment (`env` looks a variable up) or generated.
    pub fn password(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<Password, RolesError> {
        let Some(var) = &self.password_env else { return Ok(Password::Generated(generate())) };
        let value = env(var)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| RolesError::MissingPassword { person: self.name.clone(), var: var.clone() })?;
        // Quotes and backslashes would have to be escaped in SQL differently per server mode.
        if value.chars().any(|c| c == '\'' || c == '\\' || c.is_control()) {
            return Err(RolesError::UnsafePassword { person: self.name.clone(), var: var.clone() });
        }
        Ok(Password::FromEnv { var: var.clone(), value: SecretString::from(value) })
    }
}

/// 24 letters and digits: about 143 bits.
fn generate() -> SecretString {
    use rand::Rng as _;
    let value: String = rand::rng().sample_iter(rand::distr::Alphanumeric).take(24).map(char::from).collect();
    SecretString::from(value)
}

/// Account and role names go into statements quoted, but are kept to a safe alphabet anyway.
fn check_name(what: &'static str, value: &str) -> Result<(), RolesError> {
    let ok = !value.is_empty()
        && value.len() <= 32
        && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
    if ok {
        Ok(())
    } else {
        Err(RolesError::InvalidName { what, value: value.to_string() })
    }
}

fn check_host(value: &str) -> Result<(), RolesError> {
    let ok = !value.is_empty()
        && value.len() <= 255
        && value.chars().all(|c| c.is_ascii_alphanumeric() || "%_.-:/".contains(c));
    if ok {
        Ok(())
    } else {
        Err(RolesError::InvalidName { what: "mysql_host", value: value.to_string() })
    }
}

/// A roles file for the module's tests: alice, an approver with a password from `ALICE_PW`.
#[cfg(test)]
pub(crate) const EXAMPLE: &str = r#"
        role_prefix = "sg_sale"
        [[person]]
        name = "alice"
        role = "approver"
        mysql_user = "alice"
        redis_user = "alice"
        password_env = "ALICE_PW"
    "#;

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret as _;

    const FILE: &str = EXAMPLE;

    #[test]
    fn a_roles_file_names_people_roles_and_accounts() {
        let spec = RolesSpec::parse(FILE, "roles.toml").unwrap();
        assert_eq!(spec.persons[0].role, SaleRole::Approver);
        assert_eq!(spec.persons[0].mysql_host, "%");
    }

    #[test]
    fn a_password_comes_from_the_named_variable_or_is_generated() {
        let spec = RolesSpec::parse(FILE, "roles.toml").unwrap();
        let alice = &spec.persons[0];
        let env = |v: &str| (v == "ALICE_PW").then(|| "s3cret".to_string());
        assert!(
            matches!(alice.password(&env).unwrap(), Password::FromEnv { value, .. } if value.expose_secret() == "s3cret")
        );
        assert!(matches!(alice.password(&|_| None), Err(RolesError::MissingPassword { .. })));
        let generated = Person { password_env: None, ..alice.clone() }.password(&|_| None).unwrap();
        assert!(matches!(generated, Password::Generated(p) if p.expose_secret().len() == 24));
    }

    #[test]
    fn a_password_in_the_file_is_refused() {
        let err = RolesSpec::parse(&format!("{FILE}\npassword = \"hunter2\"\n"), "roles.toml").unwrap_err();
        assert!(matches!(err, RolesError::ParseSpec { .. }));
    }

    #[test]
    fn an_account_name_with_a_quote_is_refused() {
        let text = FILE.replace("mysql_user = \"alice\"", "mysql_user = \"al'ice\"");
        assert!(matches!(RolesSpec::parse(&text, "roles.toml"), Err(RolesError::InvalidName { .. })));
    }
}
