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

/// What a switch row covers: every product, one drill rig's products, or one product. Written
/// (and serialised) as its `scope` column text: `global`, `rig:<run id>` or `product:<id>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(type = "string"))]
pub enum Scope {
    Global,
    /// The products a drill run put on sale (`inventory.rig`): what its engines' breakers
    /// escalate to and its guided exit leads back, so the sale beside it is never touched.
    Rig(u64),
    Product(u64),
}

impl Scope {
    /// The `scope` column: `global` or `product:<id>`.
    pub fn key(self) -> String {
        match self {
            Self::Global => "global".into(),
            Self::Rig(run) => format!("rig:{run}"),
            Self::Product(p) => format!("product:{p}"),
        }
    }

    pub fn product_id(self) -> Option<u64> {
        match self {
            Self::Product(p) => Some(p),
            Self::Global | Self::Rig(_) => None,
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
#[error("unknown scope {0:?} (global, rig:<run id> or product:<id>)")]
pub struct UnknownScope(pub String);

impl FromStr for Scope {
    type Err = UnknownScope;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "global" {
            return Ok(Self::Global);
        }
        let id = |prefix: &str| s.strip_prefix(prefix).and_then(|id| id.parse().ok());
        id("product:")
            .map(Self::Product)
            .or_else(|| id("rig:").map(Self::Rig))
            .ok_or_else(|| UnknownScope(s.to_string()))
    }
}

impl TryFrom<String> for Scope {
    type Error = UnknownScope;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

/// The products an engine sells, and so the switch row that is its own: the sale's (every
/// product on no drill rig; the global row), or one drill rig's (`inventory.rig`; the rig's
/// row). A breaker escalates to its home's row, and only a guided exit of that row closes it.
///
/// The two never cover each other: no engine sells both a sale's product and a rig's, so the
/// global row (a person's, or a sale engine's breaker) leaves a drill's rig alone, and a rig's
/// row never reaches the sale. Both sides of a drill stay what they would be without it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Home {
    #[default]
    Sale,
    Rig(u64),
}

impl Home {
    /// The switch row of this home.
    pub fn scope(self) -> Scope {
        match self {
            Self::Sale => Scope::Global,
            Self::Rig(run) => Scope::Rig(run),
        }
    }

    /// The `inventory.rig` value of this home's products (`NULL` for the sale's).
    pub fn rig(self) -> Option<u64> {
        match self {
            Self::Sale => None,
            Self::Rig(run) => Some(run),
        }
    }
}

/// One row of the switch as an engine applies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub mode: Mode,
    /// The revision of the row's last change.
    pub revision: u64,
}

/// The whole switch at one revision, as an engine applies it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SwitchView {
    /// The newest change reflected here (0: the switch was never set).
    pub revision: u64,
    pub global: Option<Mode>,
    /// The revision of the global row's last change (0: never set).
    pub global_revision: u64,
    /// The drill rigs' rows, by run id.
    pub rigs: HashMap<u64, Row>,
    pub products: HashMap<u64, Mode>,
}

impl SwitchView {
    /// The mode for one product of the sale: the higher of the global row and the product's.
    pub fn mode_for(&self, product_id: u64) -> Mode {
        self.mode_in(Home::Sale, product_id)
    }

    /// The mode for one product of `home`: the higher of the home's row (global, or the
    /// rig's) and the product's row.
    pub fn mode_in(&self, home: Home, product_id: u64) -> Mode {
        let home_mode = self.home_mode(home);
        self.products.get(&product_id).map_or(home_mode, |&m| m.max(home_mode))
    }

    /// The global mode.
    pub fn global_mode(&self) -> Mode {
        self.global.unwrap_or(Mode::Normal)
    }

    /// The mode of a home's products without a row of their own (what an instance reports
    /// as its mode): its home's row.
    pub fn home_mode(&self, home: Home) -> Mode {
        self.home_row(home).map_or(Mode::Normal, |r| r.mode)
    }

    /// The home's own row (`None`: never set).
    pub fn home_row(&self, home: Home) -> Option<Row> {
        match home {
            Home::Sale => self.global.map(|mode| Row { mode, revision: self.global_revision }),
            Home::Rig(run) => self.rigs.get(&run).copied(),
        }
    }

    /// The revision of the home's own row (0: never set).
    pub fn home_revision(&self, home: Home) -> u64 {
        self.home_row(home).map_or(0, |r| r.revision)
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
            rigs: HashMap::new(),
            products: HashMap::from([(1, Mode::Normal), (2, Mode::Paused)]),
        };
        assert_eq!(view.mode_for(1), Mode::Degraded);
        assert_eq!(view.mode_for(2), Mode::Paused);
        assert_eq!(view.mode_for(3), Mode::Degraded);
        assert_eq!(SwitchView::default().mode_for(1), Mode::Normal);
    }

    #[test]
    fn a_rigs_row_and_the_global_row_each_cover_their_own_products_only() {
        let view = SwitchView {
            revision: 5,
            global: Some(Mode::Normal),
            global_revision: 1,
            rigs: HashMap::from([(7, Row { mode: Mode::Degraded, revision: 5 })]),
            products: HashMap::from([(2, Mode::Paused)]),
        };
        assert_eq!(view.mode_for(1), Mode::Normal, "the sale's products ignore a rig's row");
        assert_eq!(view.mode_in(Home::Rig(7), 1), Mode::Degraded);
        assert_eq!(view.mode_in(Home::Rig(7), 2), Mode::Paused, "a product's own row still counts");
        assert_eq!(view.mode_in(Home::Rig(8), 1), Mode::Normal, "another rig's row does not");
        assert_eq!((view.home_mode(Home::Sale), view.home_mode(Home::Rig(7))), (Mode::Normal, Mode::Degraded));
        assert_eq!((view.home_revision(Home::Sale), view.home_revision(Home::Rig(7))), (1, 5));
        assert_eq!(view.home_revision(Home::Rig(8)), 0);
        let degraded = SwitchView { global: Some(Mode::Degraded), ..view };
        assert_eq!(degraded.mode_in(Home::Rig(8), 1), Mode::Normal, "the global row leaves a rig alone");
        assert_eq!(degraded.mode_for(1), Mode::Degraded);
    }

    #[test]
    fn modes_and_scopes_round_trip_through_their_column_text() {
        for m in [Mode::Normal, Mode::Degraded, Mode::Paused] {
            assert_eq!(m.as_str().parse::<Mode>(), Ok(m));
        }
        assert!("degraded".parse::<Mode>().is_err());
        for scope in [Scope::Global, Scope::Rig(3), Scope::Product(7)] {
            assert_eq!(scope.key().parse::<Scope>(), Ok(scope));
        }
        assert_eq!(Scope::Product(7).key(), "product:7");
        assert!("product:x".parse::<Scope>().is_err());
        assert!("rig:".parse::<Scope>().is_err());
        assert_eq!(Scope::Rig(3).key(), "rig:3");
        assert_eq!(serde_json::to_string(&Scope::Global).unwrap(), "\"global\"");
    }
}
