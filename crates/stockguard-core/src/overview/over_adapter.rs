//! The overview of a sale read over its adapter, where no engine of ours answers a scrape: the
//! same first line (the verdict of the alerts), units sold of initial stock from the tick's
//! reading (each product's initial stock and the units its live orders hold), the sale's
//! order rows and their rate over the last minute from the same reading (its DB statement
//! counts each product's rows anyway: the overview puts no statement of its own on the sale's
//! orders table, which at a sale's peak is its busiest), and the open compensation cases of
//! the state database. What only our engines know (answers other than an order, p99, backlog,
//! the mode) is not there; [`Overview::over_adapter`] says whose sale it is, and the window
//! leaves those figures out.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use chrono::Utc;

use super::{verdict, OrderFigures, Overview, OverviewError, SaleFigures};
use crate::adapter::{AdapterReading, OpenedSale};
use crate::alerts::{acks, AlertState, Onsets};
use crate::compensation::CaseStatus;
use crate::profile::ConnectionSettings;
use crate::switch::Mode;

/// The window over which orders per second are counted.
const RATE_WINDOW: Duration = Duration::from_secs(60);

/// The sale's units from a reading of every product.
pub fn sale_figures(readings: &[AdapterReading]) -> SaleFigures {
    let initial_units: i64 = readings.iter().map(|r| r.reading.initial_stock).sum();
    let sold_units: i64 = readings.iter().map(|r| r.reading.live_orders_qty).sum();
    let sold_pct = if initial_units > 0 { sold_units as f64 * 100.0 / initial_units as f64 } else { 0.0 };
    SaleFigures {
        products: readings.len() as i64,
        initial_units,
        remaining_units: initial_units - sold_units,
        sold_units,
        sold_pct,
    }
}

/// Orders per second from successive counts of the sale's order rows: the rows added since
/// the oldest count within the last minute, over the time between. No rate until two counts
/// are some time apart; rows removed (an order deleted) count as none added, never as a
/// negative rate.
#[derive(Debug, Default)]
pub struct OrderRate {
    counts: VecDeque<(Instant, u64)>,
}

impl OrderRate {
    /// Records `rows` counted at `at` and returns the rate and the seconds it covers.
    pub fn observe(&mut self, at: Instant, rows: u64) -> Option<(f64, f64)> {
        while self.counts.front().is_some_and(|(t, _)| at.saturating_duration_since(*t) > RATE_WINDOW) {
            self.counts.pop_front();
        }
        self.counts.push_back((at, rows));
        let (since, then) = *self.counts.front()?;
        let secs = at.saturating_duration_since(since).as_secs_f64();
        (secs > 0.0).then(|| (rows.saturating_sub(then) as f64 / secs, secs))
    }
}

/// The sale's order rows and their rate, from the reading (nothing when the file names no
/// orders table).
fn order_figures(sale: &OpenedSale, readings: &[AdapterReading], rate: &mut OrderRate) -> OrderFigures {
    if sale.file.orders.is_none() {
        return OrderFigures::default();
    }
    let rows: u64 = readings.iter().map(|r| r.order_rows.max(0) as u64).sum();
    let per_s = rate.observe(Instant::now(), rows);
    OrderFigures {
        accepted: rows,
        window_s: per_s.map(|(_, secs)| secs),
        orders_per_s: per_s.map(|(r, _)| r),
        accepted_per_s: per_s.map(|(r, _)| r),
        ..OrderFigures::default()
    }
}

/// The overview of `sale` from the tick's adapter `readings` and the alerts the caller
/// evaluated; `rate` is the caller's, kept from tick to tick.
pub async fn read(
    sale: &OpenedSale,
    readings: &[AdapterReading],
    alerts: Vec<AlertState>,
    rate: &mut OrderRate,
) -> Result<Overview, OverviewError> {
    let orders = order_figures(sale, readings, rate);
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

/// A one-off overview (the CLI's), as [`super::once`] is for our own sale: the two settled
/// readings `stockguard alerts` judges ([`crate::adapter::alerts::judged`]; the order rate counts
/// the sale's order rows in both), the alerts they raise with their acknowledgements (kept in
/// the state database; with none, nothing is known taken), and the figures of the second.
pub async fn once(sale: &OpenedSale, settings: &ConnectionSettings) -> Result<Overview, OverviewError> {
    let baselines = sale.baselines().await?;
    let judged = crate::adapter::alerts::judged(&sale.file, &sale.links(), &baselines, &settings.thresholds).await?;
    let mut rate = OrderRate::default();
    order_figures(sale, &judged.first, &mut rate);
    let onsets = Onsets::once(&judged.alerts, Utc::now());
    let states = match &sale.state {
        Some(state) => {
            let desk = acks::Desk::adapter(state, settings, &sale.file.sale.name);
            acks::states_at(desk, &judged.alerts, &onsets).await?
        }
        None => onsets.unacknowledged(&judged.alerts),
    };
    read(sale, &judged.second, states, &mut rate).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recon::Reading;

    fn reading(id: u64, initial: i64, live: i64) -> AdapterReading {
        AdapterReading {
            reading: Reading::exact(id, initial, live),
            reserved: 0,
            reserving_orders_qty: 0,
            initial_source: "column",
            redis_excess: 0,
            buckets: Vec::new(),
            bucket_drift: Vec::new(),
            redis_total: None,
            redis_sold: None,
            order_rows: live,
            lost: None,
            unsettled: None,
            unreadable: None,
        }
    }

    #[test]
    fn the_units_sold_are_what_live_orders_hold_of_the_initial_stock() {
        let s = sale_figures(&[reading(1, 20, 18), reading(2, 20, 1), reading(3, 60, 0)]);
        assert_eq!((s.products, s.initial_units, s.sold_units, s.remaining_units), (3, 100, 19, 81));
        assert!((s.sold_pct - 19.0).abs() < 1e-9);
        assert_eq!(sale_figures(&[]).sold_pct, 0.0, "an empty sale sold nothing, not NaN");
    }

    #[test]
    fn the_rate_is_the_rows_added_over_the_last_minute_and_none_from_a_single_count() {
        let mut rate = OrderRate::default();
        let t0 = Instant::now();
        assert_eq!(rate.observe(t0, 100), None, "one count is no rate");
        assert_eq!(rate.observe(t0 + Duration::from_secs(10), 150), Some((5.0, 10.0)));
        assert_eq!(rate.observe(t0 + Duration::from_secs(20), 300), Some((10.0, 20.0)));
        // Seventy seconds in, the first count has left the window: the rate is since 10 s.
        assert_eq!(rate.observe(t0 + Duration::from_secs(70), 300), Some((2.5, 60.0)));
    }

    #[test]
    fn rows_removed_give_a_rate_of_zero_not_a_negative_one() {
        let mut rate = OrderRate::default();
        let t0 = Instant::now();
        rate.observe(t0, 50);
        assert_eq!(rate.observe(t0 + Duration::from_secs(5), 40), Some((0.0, 5.0)));
    }
}
