//! Which server the sale's database runs on: the statements differ a little.

use serde::Serialize;

/// MariaDB (10.11) or MySQL (8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Flavour {
    MariaDb,
    MySql,
}

impl Flavour {
    /// From `SELECT VERSION()`: MariaDB says so (`10.11.6-MariaDB-0+deb12u1`).
    pub fn from_version(version: &str) -> Self {
        if version.to_ascii_lowercase().contains("mariadb") {
            Self::MariaDb
        } else {
            Self::MySql
        }
    }

    /// Asks the server.
    pub async fn detect(pool: &sqlx::MySqlPool) -> Result<Self, sqlx::Error> {
        let version: String = sqlx::query_scalar("SELECT VERSION()").fetch_one(pool).await?;
        Ok(Self::from_version(&version))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::MariaDb => "MariaDB",
            Self::MySql => "MySQL",
        }
    }

    /// The keyword between the role and the account in `SET DEFAULT ROLE`.
    pub(crate) fn default_role_keyword(self) -> &'static str {
        match self {
            Self::MariaDb => "FOR",
            Self::MySql => "TO",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flavour_is_read_from_the_version_string() {
        assert_eq!(Flavour::from_version("10.11.6-MariaDB-0+deb12u1"), Flavour::MariaDb);
        assert_eq!(Flavour::from_version("8.0.36"), Flavour::MySql);
    }
}
