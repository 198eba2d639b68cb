//! Where an adapter file says what: each `key = "value"` of its text with its line and
//! section, so that a problem found after parsing (a shape rule, a table the sale lacks, a
//! stream with no group) names the line a person must fix (issue 49).
//!
//! A small scan, not a second TOML parser: it reads the lines the file's own format uses
//! (`[section]` headers, `key = "value"` pairs, several on a line inside an inline table) and
//! leaves everything else alone. What it cannot place is said without a line.

use std::path::{Path, PathBuf};

use super::missing::Missing;

/// One `key = "value"` of the file.
#[derive(Debug, Clone)]
struct Said {
    line: usize,
    section: String,
    key: String,
    value: String,
}

/// The file's path and where it says what. Two files are equal whatever their lines: this
/// says where the words are, not what they say.
#[derive(Debug, Clone, Default)]
pub struct FileLines {
    path: PathBuf,
    said: Vec<Said>,
    /// Each `[section]` header's line.
    sections: Vec<(String, usize)>,
}

impl PartialEq for FileLines {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl FileLines {
    /// Reads where `text` (the file at `path`) says what.
    pub fn scan(text: &str, path: &Path) -> Self {
        let mut lines = Self { path: path.to_path_buf(), ..Self::default() };
        let mut section = String::new();
        for (n, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.starts_with('#') {
                continue;
            }
            if let Some(header) = line.strip_prefix('[').and_then(|l| l.split(']').next()) {
                if !line.starts_with("[[") {
                    section = header.trim().to_string();
                    lines.sections.push((section.clone(), n + 1));
                    continue;
                }
            }
            lines.said.extend(pairs(line).into_iter().map(|(key, value)| Said {
                line: n + 1,
                section: section.clone(),
                key,
                value,
            }));
        }
        lines
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The line of `[section] key`, or of the section's header when the key is not written
    /// there (a default the file left out).
    pub fn of_key(&self, section: &str, key: &str) -> Option<usize> {
        self.said
            .iter()
            .find(|s| s.section == section && s.key == key)
            .map(|s| s.line)
            .or_else(|| self.sections.iter().find(|(name, _)| name == section).map(|(_, line)| *line))
    }

    /// The first line that gives `name` as a value (a table, a column, a key).
    pub fn of_name(&self, name: &str) -> Option<usize> {
        self.of_value(None, name)
    }

    /// The first line whose value is `value` (in `section` when given).
    fn of_value(&self, section: Option<&str>, value: &str) -> Option<usize> {
        self.said.iter().find(|s| s.value == value && section.is_none_or(|want| s.section == want)).map(|s| s.line)
    }

    /// The line that names what `missing` says the sale lacks.
    pub fn of_missing(&self, missing: &Missing) -> Option<usize> {
        match missing {
            Missing::Table { table } => self.of_value(None, table),
            Missing::Column { table, column } => {
                // The column of the section (or inline table) that names the table.
                let sections: Vec<&str> =
                    self.said.iter().filter(|s| s.value == *table).map(|s| s.section.as_str()).collect();
                self.said
                    .iter()
                    .find(|s| s.value == *column && sections.contains(&s.section.as_str()))
                    .map(|s| s.line)
                    .or_else(|| self.of_value(None, column))
            }
            Missing::KeyTemplate { template, .. } => self.of_value(None, template),
            Missing::Stream { .. } => self.of_key("inflight", "stream"),
            Missing::Group { .. } => self.of_key("inflight", "group"),
            Missing::StreamField { key, .. } => self.of_key("inflight", key),
            Missing::BullmqQueue { .. } | Missing::RabbitQueue { .. } => self.of_key("inflight", "queue"),
            Missing::RabbitUnreachable { .. } => self.of_key("inflight", "url"),
            Missing::Row { table, .. } => {
                self.of_value(Some("switch"), table).or_else(|| self.of_key("switch", "table"))
            }
            Missing::Undecided { line, .. } => Some(*line),
            Missing::NoProducts => self.of_key("stock", "table"),
            Missing::NoSaleDb | Missing::NoSaleRedis => None,
        }
    }

    /// The line a shape problem names: one that begins `[section] key` (the way
    /// [`super::file::AdapterFile`]'s checks word them), or the section's header.
    pub fn of_problem(&self, problem: &str) -> Option<usize> {
        let rest = problem.strip_prefix('[')?;
        let (section, rest) = rest.split_once(']')?;
        // The key's first part: a dotted key (`shape.field`) stops at its dot.
        let key: String = rest.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        self.of_key(section.trim(), &key)
    }
}

/// The `key = "value"` pairs of one line (also inside `{ ... }`); values that are not quoted
/// strings are kept as written (numbers, booleans), arrays are left out.
fn pairs(line: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = line.trim_start_matches('{').trim();
    while let Some((key, after)) = rest.split_once('=') {
        let key = key.trim().trim_start_matches(['{', ',']).trim().trim_matches('"').to_string();
        let after = after.trim_start();
        let (value, next) = if let Some(quoted) = after.strip_prefix('"') {
            match quoted.split_once('"') {
                Some((value, next)) => (value.to_string(), next),
                None => break,
            }
        } else if after.starts_with('[') || after.starts_with('{') {
            // An array, or an inline table whose pairs are read next.
            if after.starts_with('{') {
                rest = after.trim_start_matches('{');
                if !key.is_empty() {
                    continue;
                }
            }
            break;
        } else {
            let end = after.find([',', '}']).unwrap_or(after.len());
            (after[..end].trim().to_string(), &after[end..])
        };
        if !key.is_empty() && !key.contains(' ') {
            out.push((key, value));
        }
        rest = next.trim_start().trim_start_matches([',', '}']).trim_start();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"[sale]
name = "mall"

[stock]
table = "goods"
id = "goods_id"
available = "stock_count"

[orders]
table = "oms_order_item"
product = "goods_id"
join = { table = "oms_order", on = "order_id", key = "id" }
# a comment = "goods"

[inflight]
source = "redis_stream"
stream = "stream.orders"
group = "g1"
"#;

    fn lines() -> FileLines {
        FileLines::scan(FILE, Path::new("mall.toml"))
    }

    #[test]
    fn a_missing_table_or_column_is_found_on_the_line_that_names_it() {
        let l = lines();
        assert_eq!(l.of_missing(&Missing::Table { table: "goods".into() }), Some(5));
        assert_eq!(l.of_missing(&Missing::Table { table: "oms_order".into() }), Some(12), "inside an inline table");
        let column = Missing::Column { table: "oms_order_item".into(), column: "goods_id".into() };
        assert_eq!(l.of_missing(&column), Some(11), "the column of the section naming that table");
        let joined = Missing::Column { table: "oms_order".into(), column: "id".into() };
        assert_eq!(l.of_missing(&joined), Some(12));
    }

    #[test]
    fn a_missing_source_is_found_on_its_key_and_a_left_out_key_on_its_section() {
        let l = lines();
        assert_eq!(l.of_missing(&Missing::Stream { stream: "stream.orders".into() }), Some(17));
        assert_eq!(l.of_missing(&Missing::Group { stream: "s".into(), group: "g1".into() }), Some(18));
        assert_eq!(l.of_key("inflight", "product_field"), Some(15), "not written: the section's header");
        assert_eq!(l.of_missing(&Missing::NoSaleRedis), None);
    }

    #[test]
    fn a_shape_problem_names_the_line_of_the_key_it_begins_with() {
        let l = lines();
        assert_eq!(l.of_problem("[stock] available is not an identifier"), Some(7));
        assert_eq!(l.of_problem("[sale] settle_ms is at most 60000"), Some(1), "left out: the header");
        assert_eq!(l.of_problem("no [stock] table and no [sale] products"), None);
    }
}
