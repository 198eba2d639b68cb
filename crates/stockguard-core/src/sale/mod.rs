//! One sale, whoever built it (issue 50): [`Sale`] is a sale our engine runs or one read over
//! its adapter file. Both doors hold one, open it one way ([`open()`]), ask it what it can do
//! ([`Sale::require`], the table in [`capability`]) and let it say where its records are and
//! how its compensation runs, instead of choosing between two code paths each time.
//!
//! - [`capability`]: the one table of what each kind of sale can do, and the refusal both
//!   doors print.
//! - [`open`]: opening a sale from a profile, an adapter file and a state database URL.

pub mod capability;
pub mod open;

use std::sync::Arc;

use sqlx::MySqlPool;

pub use capability::{Capability, Grounds, Need, Refusal, SaleKind, Support};
pub use open::{open, OpenRequest, SaleError};

use crate::adapter::{AdapterError, OpenedSale};
use crate::alerts::acks;
use crate::compensation::execute::Execution;
use crate::compensation::open::Opened;
use crate::compensation::sale_side::SaleSide;
use crate::compensation::{self, CompensationError};
use crate::connect::Connections;
use crate::product_id::ProductId;
use crate::profile::ConnectionSettings;

/// A sale, opened.
pub enum Sale {
    Ours(Box<OurSale>),
    Adapter(Box<AdapterSale>),
}

/// A sale our engine runs: our tables, keys and streams.
pub struct OurSale {
    pub conns: Connections,
    /// The profile's read replica, for the ledger check (when asked for).
    pub replica: Option<MySqlPool>,
}

/// A sale Stockguard did not build, read over its adapter file.
pub struct AdapterSale {
    pub sale: Arc<OpenedSale>,
    /// What it was opened with (environment, role, the sale's servers).
    pub settings: ConnectionSettings,
}

impl Sale {
    pub fn kind(&self) -> SaleKind {
        match self {
            Self::Ours(_) => SaleKind::Ours,
            Self::Adapter(_) => SaleKind::Adapter,
        }
    }

    /// An adapter sale's name (its file's `[sale] name`); empty for our own sale.
    pub fn name(&self) -> &str {
        match self {
            Self::Ours(_) => "",
            Self::Adapter(a) => &a.sale.file.sale.name,
        }
    }

    /// The settings it was opened with.
    pub fn settings(&self) -> &ConnectionSettings {
        match self {
            Self::Ours(o) => &o.conns.settings,
            Self::Adapter(a) => &a.settings,
        }
    }

    /// Whether this sale can do `capability` (the table, and an adapter sale's file): the
    /// refusal both doors print when not.
    pub fn require(&self, capability: Capability) -> Result<(), Refusal> {
        match self {
            Self::Ours(_) => capability::of_kind_at_all(SaleKind::Ours, capability),
            Self::Adapter(a) => capability::over_adapter(&a.sale, capability),
        }
    }

    /// Our own sale's connections for `capability`, or the refusal: for what only our own
    /// sale can do, and for what a door does on our sale's path alone.
    pub fn ours(&self, capability: Capability) -> Result<&Connections, Refusal> {
        match self {
            Self::Ours(o) => Ok(&o.conns),
            Self::Adapter(a) => Err(capability::over_adapter(&a.sale, capability).err().unwrap_or(Refusal {
                capability,
                kind: SaleKind::Adapter,
                sale: a.sale.file.sale.name.clone(),
                grounds: Grounds::NotOnThisPath,
                why: capability::elsewhere(capability),
            })),
        }
    }

    /// The sale over its adapter, when that is what is open.
    pub fn adapter(&self) -> Option<&Arc<OpenedSale>> {
        match self {
            Self::Adapter(a) => Some(&a.sale),
            Self::Ours(_) => None,
        }
    }

    /// Our own sale's read replica, when one was opened.
    pub fn replica(&self) -> Option<&MySqlPool> {
        match self {
            Self::Ours(o) => o.replica.as_ref(),
            Self::Adapter(_) => None,
        }
    }

    /// Where Stockguard keeps its own records of this sale (audit, compensation cases,
    /// acknowledgements): our sale's database, or an adapter sale's state database.
    pub fn records(&self) -> Result<&MySqlPool, AdapterError> {
        match self {
            Self::Ours(o) => Ok(&o.conns.mysql),
            Self::Adapter(a) => a.sale.state(),
        }
    }

    /// Where the acknowledgements of this sale's alerts are kept (none: an adapter sale
    /// without a state database).
    pub fn alert_acks(&self) -> Option<acks::Desk<'_>> {
        match self {
            Self::Ours(o) => Some(acks::Desk::ours(&o.conns)),
            Self::Adapter(a) => {
                a.sale.state.as_ref().map(|state| acks::Desk::adapter(state, &a.settings, &a.sale.file.sale.name))
            }
        }
    }

    /// Opens (or finds) the product's compensation case from the sale's own record of who
    /// bought beyond stock: our ledger, or the sale's orders read over its adapter.
    pub async fn open_case(&self, product_id: &ProductId) -> Result<Opened, CompensationError> {
        match self {
            Self::Ours(o) => match product_id.as_num() {
                Some(n) => compensation::open::open_case(&o.conns.mysql, n).await,
                // Our own sale's ids are numbers: text names none of its products.
                None => Err(CompensationError::Refused(format!("no product {product_id} in this sale"))),
            },
            Self::Adapter(a) => compensation::over_adapter::open_for(&a.sale, product_id).await,
        }
    }

    /// Executes an approved case: in our ledger, or in the sale over its adapter.
    pub async fn execute_case(
        &self,
        case_id: u64,
        progress: &(dyn Fn(usize, usize, &str) + Sync),
    ) -> Result<Execution, CompensationError> {
        match self {
            Self::Ours(o) => compensation::execute::execute(&o.conns.mysql, case_id, progress).await,
            Self::Adapter(a) => {
                compensation::over_adapter::execute(a.sale.state()?, SaleSide::of(&a.sale)?, case_id, progress).await
            }
        }
    }
}
