//! The overview of a sale read over its adapter, where no engine of ours answers a scrape: the
//! same first line (the verdict of the alerts), units sold of initial stock from the tick's
//! reading (each product's initial stock and the units its live orders hold), orders per
//! second from the orders table's own `created` column (the rows of the last minute), and the
//! open compensation cases of the state database. What only our engines know (answers other
//! than an order, p99, backlog, the mode) is not there; [`Overview::over_adapter`] says whose
//! sale it is, and the window leaves those figures out.

use chrono::Utc;

use super::{verdict, OrderFigures, Overview, OverviewError, SaleFigures};
use crate::adapter::OpenedSale;
use crate::alerts::AlertState;
use crate::compensation::CaseStatus;
use crate::recon::Reading;
use crate::switch::Mode;

/// The window over which orders per second are counted.
const RATE_WINDOW_S: i64 = 60;

/// The sale's units from a reading of every product.
pub fn sale_figures(readings: &[Reading]) -> SaleFigures {
    let initial_units: i64 = readings.iter().map(|r| r.initial_stock).sum();
    let sold_units: i64 = readings.iter().map(|r| r.live_orders_qty).sum();
    let sold_pct = if initial_units > 0 { sold_units as f64 * 100.0 / initial_units as f64 } else { 0.0 };
    SaleFigures {
        products: readings.len() as i64,
        initial_units,
        remaining_units: initial_units - sold_units,
        sold_units,
        sold_pct,
    }
}

/// The orders the sale's table holds, and those of the last minute as a rate (none when the
/// file names no `created` column). One SELECT on the sale's database.
async fn order_figures(sale: &OpenedSale) -> Result<OrderFigures, OverviewError> {
    let (Some(orders), Some(pool)) = (&sale.file.orders, &sale.mysql) else {
        return Ok(OrderFigures::default());
    };
    let recent = match &orders.created {
        Some(created) => format!("SUM({} >= NOW() - INTERVAL {RATE_WINDOW_S} SECOND)", created.q()),
        None => "NULL".to_string(),
    };
    let sql = format!("SELECT CAST(COUNT(*) AS UNSIGNED), CAST({recent} AS SIGNED) FROM {}", orders.table.q());
    let (all, last_minute): (u64, Option<i64>) = sqlx::query_as(&sql).fetch_one(pool).await?;
    let rate = last_minute.map(|n| n.max(0) as f64 / RATE_WINDOW_S as f64);
    Ok(OrderFigures {
        accepted: all,
        window_s: rate.map(|_| RATE_WINDOW_S as f64),
        orders_per_s: rate,
        accepted_per_s: rate,
        ..OrderFigures::default()
    })
}

/// The overview of `sale` from the tick's `readings` and the alerts the caller evaluated.
pub async fn read(sale: &OpenedSale, readings: &[Reading], alerts: Vec<AlertState>) -> Result<Overview, OverviewError> {
    let orders = order_figures(sale).await?;
    let compensation_open = match &sale.state {
        Some(state) => crate::compensation::read::list(state, None)
            .await?
            .into_iter()
            .filter(|c| !matches!(c.status, CaseStatus::Executed | CaseStatus::Closed))
            .collect(),
        None => Vec::new(),
    };
    Ok(Overview {
        at: Utc::now(),
        verdict: verdict::of(&alerts),
        sale: sale_figures(readings),
        orders,
        engines: Vec::new(),
        mode: Mode::Normal,
        products_off_normal: 0,
        alerts,
        compensation_open,
        over_adapter: Some(sale.file.sale.name.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recon::DriftStatus;

    fn reading(id: u64, initial: i64, live: i64) -> Reading {
        Reading {
            product_id: id,
            name: String::new(),
            initial_stock: initial,
            db_stock: initial - live,
            live_orders_qty: live,
            inflight_pending: 0,
            pending_release: 0,
            reserved_after_cut: 0,
            redis_stock: Some(initial - live),
            expected_redis: initial - live,
            drift: Some(0),
            status: DriftStatus::Ok,
            cut_seq: 0,
            cut_epoch: 0,
            history_lost: false,
            live_derived: false,
            settled: true,
            in_flight: 0,
        }
    }

    #[test]
    fn the_units_sold_are_what_live_orders_hold_of_the_initial_stock() {
        let s = sale_figures(&[reading(1, 20, 18), reading(2, 20, 1), reading(3, 60, 0)]);
        assert_eq!((s.products, s.initial_units, s.sold_units, s.remaining_units), (3, 100, 19, 81));
        assert!((s.sold_pct - 19.0).abs() < 1e-9);
        assert_eq!(sale_figures(&[]).sold_pct, 0.0, "an empty sale sold nothing, not NaN");
    }
}
