//! The sale a compensation case over an adapter is of ([`SaleSide`]), and what executing one
//! line does there ([`perform`]): a cancel-and-refund line cancelled in the sale's own
//! database when its adapter file declares how, every other line handed over in the export.
//! The run that records each line is [`super::execute`]'s, the same as our own sale's.

use sqlx::MySqlPool;

use super::{Action, CompensationError};
use crate::adapter::compensate::{self, Cancelled};
use crate::adapter::{AdapterError, AdapterFile, OpenedSale};

/// The sale a case over an adapter is of: its file and its own database.
#[derive(Clone, Copy)]
pub struct SaleSide<'a> {
    pub file: &'a AdapterFile,
    /// The sale's database (a SELECT-only account opens and hands over; a declared cancel
    /// needs one that may update the orders' status).
    pub db: &'a MySqlPool,
}

impl<'a> SaleSide<'a> {
    /// The side of an opened sale: refused for a sale that names no orders table (counters
    /// only), since a case lists the sale's orders.
    pub fn of(sale: &'a OpenedSale) -> Result<Self, CompensationError> {
        let db = sale.mysql.as_ref().filter(|_| sale.file.orders.is_some()).ok_or_else(|| {
            CompensationError::Refused(format!(
                "the sale {:?} names no orders table: a compensation case lists the sale's orders",
                sale.file.sale.name
            ))
        })?;
        Ok(Self { file: &sale.file, db })
    }
}

/// What a line's run did in the sale: `(outcome, detail)` for its effect row.
pub(super) async fn perform(
    sale: SaleSide<'_>,
    order_no: &str,
    action: Action,
) -> Result<(&'static str, String), AdapterError> {
    let cancel = sale.file.compensation.cancel.as_ref();
    let (Action::CancelRefund, Some(cancel), Some(orders)) = (action, cancel, sale.file.orders.as_ref()) else {
        return Ok(("DONE", "handed over in the approved export: the sale's own systems carry it out".into()));
    };
    Ok(match compensate::cancel_order(sale.db, orders, cancel, order_no).await? {
        Cancelled::Now => (
            "DONE",
            format!("cancelled in the sale (status {}); the refund is the sale's own, from the export", cancel.status),
        ),
        Cancelled::Already => ("DONE", "cancelled in the sale already (status unchanged)".into()),
        Cancelled::NotLive(s) => {
            ("SKIPPED", format!("the order was no longer live in the sale (status {s}): nothing to do"))
        }
        Cancelled::Gone => ("SKIPPED", "the order is gone from the sale: nothing to do".into()),
    })
}
