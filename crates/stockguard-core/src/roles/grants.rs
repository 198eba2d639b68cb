//! Reading `SHOW GRANTS`: enough to answer "may this account write table X of database D?".
//!
//! Lines look like ``GRANT INSERT, UPDATE ON `sale`.`inventory` TO `sg_sale_oncall` `` on
//! both servers. Column-level grants (`UPDATE (stock)`) and routine grants are ignored: they
//! never give a whole table. Role grants (``GRANT `r` TO `u`@`%` ``) carry no privilege
//! themselves; the role's own lines do, when the role is active.

use super::catalogue::Privilege;

/// What one `GRANT ... ON ...` line gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// Upper-case privilege names; `ALL PRIVILEGES` is kept as `ALL`.
    pub privileges: Vec<String>,
    pub on: On,
}

/// What a grant is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum On {
    /// `*.*`
    Everything,
    /// `` `db`.* ``: a database name pattern (`_` and `%` are wildcards, `\_` is not).
    Database(String),
    /// `` `db`.`table` ``
    Table { database: String, table: String },
}

/// The grants of an account, from its `SHOW GRANTS` lines.
#[derive(Debug, Clone, Default)]
pub struct Grants(pub Vec<Grant>);

impl Grants {
    pub fn parse<S: AsRef<str>>(lines: &[S]) -> Self {
        Self(lines.iter().filter_map(|l| parse_line(l.as_ref())).collect())
    }

    /// Whether some grant gives `privilege` on the whole `table` of `database`.
    pub fn may(&self, privilege: Privilege, database: &str, table: &str) -> bool {
        self.0.iter().any(|g| {
            let gives = g.privileges.iter().any(|p| p == "ALL" || p == privilege.as_str());
            let covers = match &g.on {
                On::Everything => true,
                On::Database(pattern) => like(pattern, database),
                On::Table { database: d, table: t } => d == database && t == table,
            };
            gives && covers
        })
    }
}

fn parse_line(line: &str) -> Option<Grant> {
    let rest = line.trim().strip_prefix("GRANT ")?;
    let on_at = rest.find(" ON ")?;
    let (privileges, rest) = (&rest[..on_at], &rest[on_at + 4..]);
    let object = rest.split(" TO ").next()?.trim();
    let privileges = split_top_level(privileges)
        .into_iter()
        .filter(|p| !p.contains('('))
        .map(|p| if p.eq_ignore_ascii_case("ALL PRIVILEGES") { "ALL".to_string() } else { p.to_ascii_uppercase() })
        .collect();
    Some(Grant { privileges, on: parse_object(object)? })
}

/// `SELECT, UPDATE (a, b), INSERT` -> three parts.
fn split_top_level(s: &str) -> Vec<String> {
    let (mut parts, mut depth, mut current) = (Vec::new(), 0, String::new());
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(current.trim().to_string());
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current.trim().to_string());
    parts
}

fn parse_object(object: &str) -> Option<On> {
    if object == "*.*" {
        return Some(On::Everything);
    }
    let (database, rest) = identifier(object)?;
    let rest = rest.strip_prefix('.')?;
    if rest == "*" {
        return Some(On::Database(database));
    }
    let (table, tail) = identifier(rest)?;
    tail.is_empty().then_some(On::Table { database, table })
}

/// One identifier, back-quoted or bare; returns it and what follows.
fn identifier(s: &str) -> Option<(String, &str)> {
    if let Some(quoted) = s.strip_prefix('`') {
        let mut name = String::new();
        let mut chars = quoted.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '`' {
                if chars.peek().is_some_and(|(_, n)| *n == '`') {
                    chars.next();
                    name.push('`');
                } else {
                    return Some((name, &quoted[i + 1..]));
                }
            } else {
                name.push(c);
            }
        }
        None
    } else {
        let end = s.find('.').unwrap_or(s.len());
        Some((s[..end].to_string(), &s[end..]))
    }
}

/// SQL `LIKE` as grants use it for database names: `_` one character, `%` any, `\` escapes.
fn like(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some(('%', rest)) => (0..=n.len()).any(|i| go(rest, &n[i..])),
            Some(('_', rest)) => !n.is_empty() && go(rest, &n[1..]),
            Some(('\\', rest)) if !rest.is_empty() => n.first() == Some(&rest[0]) && go(&rest[1..], &n[1..]),
            Some((c, rest)) => n.first() == Some(c) && go(rest, &n[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&p, &n)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARIADB: &[&str] = &[
        "GRANT `sg_sale_oncall` TO `alice`@`%`",
        "GRANT USAGE ON *.* TO `alice`@`%` IDENTIFIED BY PASSWORD '*2B60'",
        "GRANT USAGE ON *.* TO `sg_sale_oncall`",
        "GRANT SELECT ON `sale\\_eu`.* TO `sg_sale_oncall`",
        "GRANT INSERT, UPDATE ON `sale_eu`.`rewrite_runs` TO `sg_sale_oncall`",
        "GRANT UPDATE (`stock`) ON `sale_eu`.`inventory` TO `sg_sale_oncall`",
        "SET DEFAULT ROLE `sg_sale_oncall` FOR `alice`@`%`",
    ];

    #[test]
    fn table_grants_give_their_table_only() {
        let g = Grants::parse(MARIADB);
        assert!(g.may(Privilege::Update, "sale_eu", "rewrite_runs"));
        assert!(!g.may(Privilege::Update, "sale_eu", "audit_log"));
        assert!(!g.may(Privilege::Update, "other", "rewrite_runs"));
    }

    #[test]
    fn database_grants_match_the_escaped_name_and_nothing_like_it() {
        let g = Grants::parse(MARIADB);
        assert!(g.may(Privilege::Select, "sale_eu", "orders"));
        assert!(!g.may(Privilege::Select, "saleXeu", "orders"));
    }

    #[test]
    fn a_column_grant_does_not_give_the_table() {
        assert!(!Grants::parse(MARIADB).may(Privilege::Update, "sale_eu", "inventory"));
    }

    #[test]
    fn all_privileges_on_everything_gives_everything() {
        let g = Grants::parse(&["GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION"]);
        assert!(g.may(Privilege::Delete, "any", "audit_log"));
    }

    #[test]
    fn mysql_8_role_lines_parse_alike() {
        let g = Grants::parse(&[
            "GRANT USAGE ON *.* TO `alice`@`%`",
            "GRANT SELECT ON `sale\\_eu`.* TO `alice`@`%`",
            "GRANT INSERT ON `sale_eu`.`audit_log` TO `alice`@`%`",
            "GRANT `sg_sale_approver`@`%` TO `alice`@`%`",
        ]);
        assert!(g.may(Privilege::Insert, "sale_eu", "audit_log"));
        assert!(!g.may(Privilege::Update, "sale_eu", "audit_log"));
    }
}
