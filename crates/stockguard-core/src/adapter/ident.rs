//! SQL names from an adapter file: plain identifiers only, always sent back-quoted, so a
//! file can name a table or a column but never smuggle SQL in.

use serde::{Deserialize, Serialize};

/// A table or column name: letters, digits, `_` and `$`, not starting with a digit, at most
/// 64 characters (MySQL's limit).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Ident(String);

impl Ident {
    pub fn new(name: &str) -> Result<Self, String> {
        let plain = !name.is_empty()
            && name.len() <= 64
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
        if plain {
            Ok(Self(name.to_string()))
        } else {
            Err(format!("{name:?} is not a plain SQL name (letters, digits, _ and $, at most 64)"))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name back-quoted for a statement.
    pub fn q(&self) -> String {
        format!("`{}`", self.0)
    }
}

impl std::fmt::Display for Ident {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Ident {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::new(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::Ident;

    #[test]
    fn plain_names_pass_and_are_back_quoted() {
        assert_eq!(Ident::new("tb_seckill_voucher").unwrap().q(), "`tb_seckill_voucher`");
        assert_eq!(Ident::new("stock$2").unwrap().as_str(), "stock$2");
    }

    #[test]
    fn anything_that_could_end_the_quote_is_refused() {
        for bad in ["a`b", "a b", "x;DROP", "", "1abc", "a.b", &"x".repeat(65)] {
            assert!(Ident::new(bad).is_err(), "{bad}");
        }
    }
}
