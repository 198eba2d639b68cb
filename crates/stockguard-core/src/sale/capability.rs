//! What each kind of sale can do: one table ([`SaleKind::supports`]) that both doors ask, so
//! the CLI and the window refuse the same things in the same words ([`Refusal`]).
//!
//! A sale our engine runs can do everything. A sale read over its adapter file can do what its
//! file gives the console the means for: its degrade flag where `[switch]` says where it is, a
//! delta repair where `[repair] rewrite = "delta"`, compensation where it names an orders
//! table and a state database holds the cases. What reads our own tables (the ledger check,
//! the burn-down, the rights panel) or runs our engine (drills, load) is not for it.

use serde::Serialize;

use crate::adapter::file::RewriteMode;
use crate::adapter::OpenedSale;

/// Something a door offers on a sale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// The reading: `recon`, `drift watch`, the board.
    Reading,
    /// The sale at a glance (`overview`, the first screen).
    Overview,
    /// The stock burn-down chart.
    Burndown,
    /// The ledger check (`recon --ledger`, the board's button).
    LedgerCheck,
    /// The degrade switch: status, on, off and the guided exit.
    Degrade,
    /// The repair of Redis stock: our fenced rewrite, an adapter sale's delta repair; the dry
    /// run included.
    Repair,
    /// Oversell compensation: cases, plans, four eyes, execution.
    Compensation,
    /// Alerts and their acknowledgements.
    Alerts,
    /// The audit log.
    Audit,
    /// The headless watcher (`watch`).
    Watch,
    /// Fault drills.
    Drills,
    /// The rights panel and `roles`.
    Rights,
    /// `products`: the catalogue.
    Products,
    /// `migrate`: our schema.
    Migrate,
    /// `engine` and `load`: our engine and its buyers.
    Engine,
    /// `adapter check|baseline|lost|repair`: the tools of an adapter file.
    AdapterTools,
}

impl Capability {
    /// Every capability, in the order the table lists them.
    pub const ALL: [Capability; 16] = [
        Self::Reading,
        Self::Overview,
        Self::Burndown,
        Self::LedgerCheck,
        Self::Degrade,
        Self::Repair,
        Self::Compensation,
        Self::Alerts,
        Self::Audit,
        Self::Watch,
        Self::Drills,
        Self::Rights,
        Self::Products,
        Self::Migrate,
        Self::Engine,
        Self::AdapterTools,
    ];

    /// Its name as a person reads it in a refusal.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reading => "the reading",
            Self::Overview => "the overview",
            Self::Burndown => "the burn-down",
            Self::LedgerCheck => "the ledger check",
            Self::Degrade => "the degrade switch",
            Self::Repair => "the repair of Redis stock",
            Self::Compensation => "compensation",
            Self::Alerts => "alerting",
            Self::Audit => "the audit log",
            Self::Watch => "the watcher",
            Self::Drills => "a fault drill",
            Self::Rights => "managing roles",
            Self::Products => "the product list",
            Self::Migrate => "migrating the schema",
            Self::Engine => "our engine (with its load)",
            Self::AdapterTools => "the adapter tools",
        }
    }
}

/// The two kinds of sale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum SaleKind {
    /// A sale our engine runs: our tables, keys and streams.
    Ours,
    /// A sale Stockguard did not build, read over its adapter file.
    Adapter,
}

/// What an adapter sale's file must give for a capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// A `[switch]` section: where the sale reads its own degrade flag.
    Switch,
    /// `[repair] rewrite = "delta"`.
    DeltaRepair,
    /// An orders table (a case lists the sale's orders) and a state database (the cases).
    OrdersAndState,
    /// A state database (the audit log).
    State,
}

impl Need {
    fn met_by(self, sale: &OpenedSale) -> bool {
        match self {
            Self::Switch => sale.file.switch.is_some(),
            Self::DeltaRepair => sale.file.repair.rewrite == RewriteMode::Delta,
            Self::OrdersAndState => sale.file.orders.is_some() && sale.state.is_some(),
            Self::State => sale.state.is_some(),
        }
    }

    /// Why a sale whose file lacks it is refused.
    pub fn unmet(self) -> &'static str {
        match self {
            Self::Switch => "its adapter file has no [switch] section (where the sale reads its own degrade flag)",
            Self::DeltaRepair => {
                "its adapter file reads the sale only (the default): add `[repair] rewrite = \"delta\"` to repair a \
                 settled drift"
            }
            Self::OrdersAndState => {
                "a case lists the sale's orders and lives in a state database: the adapter file needs an [orders] table \
                 and the sale a state database (--state-url or the profile's state_url)"
            }
            Self::State => "Stockguard keeps its records of this sale in a state database: name one (--state-url or the \
                            profile's state_url)",
        }
    }
}

/// Whether a kind of sale can do something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    Supported,
    /// Over an adapter, where the sale's file (and state database) give the means.
    Where(Need),
    /// Never, and why.
    Unsupported(&'static str),
}

impl SaleKind {
    /// The table both doors ask.
    pub const fn supports(self, capability: Capability) -> Support {
        use Capability as C;
        match self {
            Self::Ours => match capability {
                C::AdapterTools => Support::Unsupported(
                    "they read a sale through its adapter file: give --adapter FILE (or a profile's `adapter`)",
                ),
                _ => Support::Supported,
            },
            Self::Adapter => match capability {
                // Alerting reads the sale; only acknowledging one needs the state database,
                // which the acknowledgement itself says.
                C::Reading | C::Overview | C::Alerts | C::Watch | C::AdapterTools => Support::Supported,
                C::Degrade => Support::Where(Need::Switch),
                C::Repair => Support::Where(Need::DeltaRepair),
                C::Compensation => Support::Where(Need::OrdersAndState),
                C::Audit => Support::Where(Need::State),
                C::Burndown => Support::Unsupported("the burn-down reads our own orders table"),
                C::LedgerCheck => Support::Unsupported(
                    "the ledger check reads our own orders and outbox; over an adapter every reading judges the \
                     sale's ledger (LEDGER_MISMATCH)",
                ),
                C::Drills => Support::Unsupported("drills run against a sale our engine runs; run them in the sandbox"),
                C::Rights => Support::Unsupported(
                    "roles grant rights on our own tables and keys; a sale read over an adapter keeps its own accounts",
                ),
                C::Products => Support::Unsupported("the reading lists the sale's products (`recon`)"),
                C::Migrate => Support::Unsupported(
                    "migrations are our own schema; an adapter sale's state database is migrated when it is opened",
                ),
                C::Engine => Support::Unsupported("our engine sells a sale of our own schema, not this one"),
            },
        }
    }
}

/// A capability refused on a sale, in the words both doors print.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Refusal {
    pub capability: Capability,
    pub kind: SaleKind,
    /// The sale's name (an adapter sale's; empty for our own).
    pub sale: String,
    pub grounds: Grounds,
    pub why: &'static str,
}

/// On what grounds a capability is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grounds {
    /// The table says this kind of sale never can.
    Never,
    /// Its file (or state database) does not give the means.
    Needs(Need),
    /// The kind can, on a path this door has not built (a door's gap, said as such).
    NotOnThisPath,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = self.capability.as_str();
        let of = of_kind(self.kind, &self.sale);
        match self.grounds {
            Grounds::Never | Grounds::Needs(_) => write!(f, "{what} is not for {of}: {}", self.why),
            Grounds::NotOnThisPath => write!(f, "{what} of {of}, is not in the window yet: {}", self.why),
        }
    }
}

fn of_kind(kind: SaleKind, sale: &str) -> String {
    match kind {
        SaleKind::Ours => "a sale our engine runs".to_string(),
        SaleKind::Adapter if sale.is_empty() => "a sale read over an adapter file".to_string(),
        SaleKind::Adapter => format!("the sale {sale:?}, read over its adapter file"),
    }
}

/// Whether an adapter sale can do `capability`, its file read: `Err` says why not.
pub fn over_adapter(sale: &OpenedSale, capability: Capability) -> Result<(), Refusal> {
    let refused =
        |grounds, why| Refusal { capability, kind: SaleKind::Adapter, sale: sale.file.sale.name.clone(), grounds, why };
    match SaleKind::Adapter.supports(capability) {
        Support::Supported => Ok(()),
        Support::Where(need) if need.met_by(sale) => Ok(()),
        Support::Where(need) => Err(refused(Grounds::Needs(need), need.unmet())),
        Support::Unsupported(why) => Err(refused(Grounds::Never, why)),
    }
}

/// Where a capability a door has not built over an adapter is done instead (the CLI does
/// everything the table allows).
pub fn elsewhere(capability: Capability) -> &'static str {
    match capability {
        Capability::Degrade => {
            "the CLI's `stockguard degrade on|off` switches the sale's own flag, where the adapter file has a [switch] \
             section"
        }
        Capability::Repair => {
            "the CLI's `stockguard rewrite --product N` repairs a settled drift (its dry run first), where the adapter \
             file allows it"
        }
        _ => "the CLI does it over an adapter (`stockguard --adapter FILE ...`)",
    }
}

/// Whether `kind` can do `capability` at all, before a sale is opened (a door's first check;
/// a sale's file may still refuse what its kind can do where the file gives the means).
pub fn of_kind_at_all(kind: SaleKind, capability: Capability) -> Result<(), Refusal> {
    match kind.supports(capability) {
        Support::Unsupported(why) => {
            Err(Refusal { capability, kind, sale: String::new(), grounds: Grounds::Never, why })
        }
        Support::Supported | Support::Where(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Capability as C;

    /// The table, held: a change here is a change in what both doors do.
    #[test]
    fn the_table_says_what_each_kind_of_sale_can_do() {
        for c in C::ALL {
            let ours = SaleKind::Ours.supports(c);
            assert_eq!(ours == Support::Supported, c != C::AdapterTools, "our own sale: {c:?}");
        }
        let adapter: Vec<(C, &str)> = C::ALL
            .iter()
            .map(|c| {
                let said = match SaleKind::Adapter.supports(*c) {
                    Support::Supported => "yes",
                    Support::Where(Need::Switch) => "with [switch]",
                    Support::Where(Need::DeltaRepair) => "with delta repair",
                    Support::Where(Need::OrdersAndState) => "with orders and a state database",
                    Support::Where(Need::State) => "with a state database",
                    Support::Unsupported(_) => "no",
                };
                (*c, said)
            })
            .collect();
        assert_eq!(
            adapter,
            vec![
                (C::Reading, "yes"),
                (C::Overview, "yes"),
                (C::Burndown, "no"),
                (C::LedgerCheck, "no"),
                (C::Degrade, "with [switch]"),
                (C::Repair, "with delta repair"),
                (C::Compensation, "with orders and a state database"),
                (C::Alerts, "yes"),
                (C::Audit, "with a state database"),
                (C::Watch, "yes"),
                (C::Drills, "no"),
                (C::Rights, "no"),
                (C::Products, "no"),
                (C::Migrate, "no"),
                (C::Engine, "no"),
                (C::AdapterTools, "yes"),
            ]
        );
    }

    #[test]
    fn a_refusal_names_what_the_sale_and_why_in_one_line() {
        let refused = of_kind_at_all(SaleKind::Adapter, C::Drills).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "a fault drill is not for a sale read over an adapter file: drills run against a sale our engine runs; run them \
             in the sandbox"
        );
        assert!(of_kind_at_all(SaleKind::Adapter, C::Degrade).is_ok(), "its file may give the means");
        assert!(!refused.to_string().contains('\n'));
    }
}
