//! A product id as a sale keeps it: a number (our own sale, and every sale keyed by an integer
//! column) or text (a sale read over its adapter whose products are `CHAR`/`VARCHAR` keys, such
//! as `'SKU-A'`). A leaf: it imports nothing of the rooms that use it.
//!
//! An id is what it is, everywhere it travels: shown as itself (`17`, `SKU-A`), carried in
//! JSON as a number or a string (untagged), bound to SQL as an integer or a string, and put
//! into a Redis key as its text. Text is never turned into a number (no alias, no hash): a
//! sale's ids are all of one kind, the kind of its product column, so `"17"` of a `VARCHAR`
//! sale is the text `17`, not the number. Ordered numbers first (by value), then text (by its
//! bytes: `SKU-10` before `SKU-A`).
//!
//! The state database keeps an id as its text and whether it is text
//! ([`ProductId::stored`], [`ProductId::from_stored`]): one column cannot say which of the two
//! a `17` was.

use std::fmt;

use serde::{Deserialize, Serialize};
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::mysql::{MySql, MySqlTypeInfo};

/// One product's id: a number or text (in TypeScript `number | string`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(untagged)]
pub enum ProductId {
    Num(u64),
    Text(String),
}

/// Which of the two a sale's ids are: the kind of its product column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    Num,
    Text,
}

impl ProductId {
    /// The number, for a numeric id (our own sale's ids are all numbers).
    pub fn as_num(&self) -> Option<u64> {
        match self {
            Self::Num(n) => Some(*n),
            Self::Text(_) => None,
        }
    }

    pub fn kind(&self) -> IdKind {
        match self {
            Self::Num(_) => IdKind::Num,
            Self::Text(_) => IdKind::Text,
        }
    }

    /// `text` read as an id of `kind`: itself for text, its whole number for numbers (`None`
    /// when it is not one: such a value is no product of a numeric sale).
    pub fn read_as(text: &str, kind: IdKind) -> Option<Self> {
        match kind {
            IdKind::Text => Some(Self::Text(text.to_string())),
            IdKind::Num => text.trim().parse().ok().map(Self::Num),
        }
    }

    /// This id as one of a sale whose ids are of `kind`: a number typed for a sale keyed by
    /// text is that text (`17` of a `VARCHAR` sale is `"17"`); text typed for a sale keyed by
    /// numbers is its number, or `None` when it is not one (no such product).
    pub fn as_kind(&self, kind: IdKind) -> Option<Self> {
        match (self, kind) {
            (Self::Num(n), IdKind::Text) => Some(Self::Text(n.to_string())),
            (Self::Text(t), IdKind::Num) => Self::read_as(t, IdKind::Num),
            (id, _) => Some(id.clone()),
        }
    }

    /// How the state database keeps it: its text, and whether it is text.
    pub fn stored(&self) -> (String, bool) {
        (self.to_string(), matches!(self, Self::Text(_)))
    }

    /// An id the state database kept ([`Self::stored`]); `None` when a number's text is not
    /// one (a row written by hand).
    pub fn from_stored(text: String, is_text: bool) -> Option<Self> {
        if is_text {
            Some(Self::Text(text))
        } else {
            text.parse().ok().map(Self::Num)
        }
    }
}

impl IdKind {
    /// The kind of a list of one sale's ids (numbers when it is empty).
    pub fn of(ids: &[ProductId]) -> Self {
        ids.first().map_or(Self::Num, ProductId::kind)
    }
}

impl fmt::Display for ProductId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Num(n) => n.fmt(f),
            Self::Text(t) => t.fmt(f),
        }
    }
}

/// An id as a person types it (a flag, a form): a whole number is a number, anything else text;
/// a sale then reads it as its own kind ([`ProductId::as_kind`]). Empty text is no id. (There
/// is no `From<&str>`: clap would take it before this, and `17` typed would be text.)
impl std::str::FromStr for ProductId {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s.is_empty() {
            return Err("a product id is a number or text, not empty".into());
        }
        Ok(s.parse().map_or_else(|_| Self::Text(s.to_string()), Self::Num))
    }
}

impl From<u64> for ProductId {
    fn from(n: u64) -> Self {
        Self::Num(n)
    }
}

impl PartialEq<u64> for ProductId {
    fn eq(&self, other: &u64) -> bool {
        self.as_num() == Some(*other)
    }
}

impl sqlx::Type<MySql> for ProductId {
    fn type_info() -> MySqlTypeInfo {
        <u64 as sqlx::Type<MySql>>::type_info()
    }

    fn compatible(ty: &MySqlTypeInfo) -> bool {
        <u64 as sqlx::Type<MySql>>::compatible(ty) || <String as sqlx::Type<MySql>>::compatible(ty)
    }
}

/// Bound as what it is: an unsigned integer, or a string.
impl<'q> sqlx::Encode<'q, MySql> for ProductId {
    fn encode_by_ref(&self, buf: &mut Vec<u8>) -> Result<IsNull, BoxDynError> {
        match self {
            Self::Num(n) => <u64 as sqlx::Encode<MySql>>::encode_by_ref(n, buf),
            Self::Text(t) => <&str as sqlx::Encode<MySql>>::encode_by_ref(&t.as_str(), buf),
        }
    }

    fn produces(&self) -> Option<MySqlTypeInfo> {
        Some(match self {
            Self::Num(_) => <u64 as sqlx::Type<MySql>>::type_info(),
            Self::Text(_) => <str as sqlx::Type<MySql>>::type_info(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_shows_and_travels_in_json_as_itself() {
        let ids = [ProductId::Num(17), ProductId::Text("SKU-A".into())];
        assert_eq!(ids.iter().map(ToString::to_string).collect::<Vec<_>>(), ["17", "SKU-A"]);
        assert_eq!(serde_json::to_string(&ids).unwrap(), r#"[17,"SKU-A"]"#);
        let back: Vec<ProductId> = serde_json::from_str(r#"[17,"SKU-A","17"]"#).unwrap();
        assert_eq!(back, [ProductId::Num(17), ProductId::Text("SKU-A".into()), ProductId::Text("17".into())]);
    }

    fn text(t: &str) -> ProductId {
        ProductId::Text(t.into())
    }

    #[test]
    fn ids_order_numbers_first_then_text_by_its_bytes() {
        let mut ids: Vec<ProductId> = vec![text("SKU-B"), 10.into(), text("SKU-A"), text("SKU-10"), 9.into()];
        ids.sort();
        assert_eq!(ids.iter().map(ToString::to_string).collect::<Vec<_>>(), ["9", "10", "SKU-10", "SKU-A", "SKU-B"]);
    }

    #[test]
    fn text_is_never_read_as_a_number_and_the_state_database_keeps_which() {
        assert_eq!(ProductId::read_as("17", IdKind::Text), Some(ProductId::Text("17".into())));
        assert_eq!(ProductId::read_as("17", IdKind::Num), Some(ProductId::Num(17)));
        assert_eq!(ProductId::read_as("SKU-A", IdKind::Num), None);
        assert_eq!("17".parse::<ProductId>().unwrap().as_kind(IdKind::Text), Some(ProductId::Text("17".into())));
        assert_eq!("SKU-A".parse::<ProductId>().unwrap().as_kind(IdKind::Num), None);
        for id in [ProductId::Num(17), ProductId::Text("17".into()), ProductId::Text("SKU-A".into())] {
            let (text, is_text) = id.stored();
            assert_eq!(ProductId::from_stored(text, is_text), Some(id));
        }
    }
}
