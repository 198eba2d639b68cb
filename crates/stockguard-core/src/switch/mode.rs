//! Modes, scopes and the switch as one engine sees it.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How orders are taken. Ordered by precedence: when a product is covered by several scopes
/// (or the engine's own breaker), the highest wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Mode {
    /// Redis reservation, then the queue to the DB.
    Normal,
    /// Straight to the DB; Redis untouched.
    Degraded,
    /// No sales for a moment: only inside the guided exit, while Redis is rebuilt.
    Paused,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Normal => "NORMAL",
            Self::Degraded => "DEGRADED",
            Self::Paused => "PAUSED",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown mode {0:?} (NORMAL, DEGRADED or PAUSED)")]
pub struct UnknownMode(pub String);

impl FromStr for Mode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "NORMAL" => Ok(Self::Normal),
            "DEGRADED" => Ok(Self::Degraded),
            "PAUSED" => Ok(Self::Paused),
            other => Err(UnknownMode(other.to_string())),
        }
    }
}

/// What a switch row covers: every product, or one. Written (and serialised) as its
/// `scope` column text: `global` or `product:<id>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(type = "string"))]
pub enum Scope {
    Global,
    Product(u64),
}

impl Scope {
    /// The `scope` column: `global` or `product:<id>`.
    pub fn key(self) -> String {
        match self {
            Self::Global => "global".into(),
            Self::Product(p) => format!("product:{p}"),
        }
    }

    pub fn product_id(self) -> Option<u64> {
        match self {
            Self::Global => None,
            Self::Product(p) => Some(p),
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.key())
    }
}

impl From<Scope> for String {
    fn from(scope: Scope) -> Self {
        scope.key()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scope {0:?} (global or product:<id>)")]
pub struct UnknownScope(pub String);

impl FromStr for Scope {
    type Err = UnknownScope;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "global" {
            return Ok(Self::Global);
        }
        s.strip_prefix("product:")
            .and_then(|id| id.parse().ok())
            .map(Self::Product)
            .ok_or_else(|| UnknownScope(s.to_string()))
    }
}

impl TryFrom<String> for Scope {
    type Error = UnknownScope;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

/// The whole switch at one revision, as an engine applies it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SwitchView {
    /// The newest change reflected here (0: the switch was never set).
    pub revision: u64,
    pub global: Option<Mode>,
    /// The revision of the global row's last change (0: never set).
    pub global_revision: u64,
    pub products: HashMap<u64, Mode>,
}

impl SwitchView {
    /// The mode for one product: the higher of the global row and the product's row.
    pub fn mode_for(&self, product_id: u64) -> Mode {
        let global = self.global.unwrap_or(Mode::Normal);
        self.products.get(&product_id).map_or(global, |&m| m.max(global))
    }

    /// The global mode (what an instance reports as its mode).
    pub fn global_mode(&self) -> Mode {
        self.global.unwrap_or(Mode::Normal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_product_takes_the_higher_of_its_own_row_and_the_global_row() {
        let view = SwitchView {
            revision: 3,
            global: Some(Mode::Degraded),
            global_revision: 2,
            products: HashMap::from([(1, Mode::Normal), (2, Mode::Paused)]),
        };
        assert_eq!(view.mode_for(1), Mode::Degraded);
        assert_eq!(view.mode_for(2), Mode::Paused);
        assert_eq!(view.mode_for(3), Mode::Degraded);
        assert_eq!(SwitchView::default().mode_for(1), Mode::Normal);
    }

    #[test]
    fn modes_and_scopes_round_trip_through_their_column_text() {
        for m in [Mode::Normal, Mode::Degraded, Mode::Paused] {
            assert_eq!(m.as_str().parse::<Mode>(), Ok(m));
        }
        assert!("degraded".parse::<Mode>().is_err());
        for scope in [Scope::Global, Scope::Product(7)] {
            assert_eq!(scope.key().parse::<Scope>(), Ok(scope));
        }
        assert_eq!(Scope::Product(7).key(), "product:7");
        assert!("product:x".parse::<Scope>().is_err());
        assert_eq!(serde_json::to_string(&Scope::Global).unwrap(), "\"global\"");
    }
}
