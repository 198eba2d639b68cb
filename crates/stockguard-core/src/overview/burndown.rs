//! The stock burn-down: units left over the whole sale, for the sale or one product.
//!
//! **Derived from the ledger, not sampled.** Every unit that left stock is an order row with
//! its time (`created_at`), and every unit that came back is an order closed or cancelled at
//! its `updated_at` (the timeout closer and compensation flip the status and return the
//! stock in one transaction). So the curve is `initial - taken + returned` up to each
//! instant, read from the tables the sale already writes: it covers the whole sale, from the
//! first order, whether or not a console was open, it survives an app restart with nothing
//! to persist, and every console draws the same curve. Samples kept by the app would have
//! holes wherever no console ran, and a table of them would be a second truth to keep.
//! (The curve's end is `initial - live orders`; it meets the DB's stock when the ledger adds
//! up, which the ledger check verifies separately.)
//!
//! **Cheap at scale.** The database does the bucketing: at most [`MAX_BUCKETS`] rows come
//! back whatever the number of orders, with a bucket width rounded to a readable step. Taken
//! units are summed over `idx_orders_created (product_id, created_at, buy_count)` (migration
//! `..._orders_burndown_index`): a covering range for one product, a covering scan of a
//! narrow index (not of the table's rows) for the whole sale. Returned units are the few
//! closed or cancelled orders, found through the existing status indexes.

use chrono::NaiveDateTime;
use serde::Serialize;
use sqlx::MySqlPool;

use super::OverviewError;

/// At most this many buckets, whatever the length of the sale.
pub const MAX_BUCKETS: i64 = 120;

/// Bucket widths a person reads at a glance, in seconds.
const STEPS: &[i64] = &[1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];

/// One instant of the curve: the end of a bucket, with what was left then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BurnPoint {
    pub at: NaiveDateTime,
    /// Units left at `at`.
    pub remaining: i64,
    /// Units taken in the bucket, net of those returned in it.
    pub sold: i64,
}

/// The burn-down of the sale (`product_id` none) or of one product.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BurnDown {
    pub product_id: Option<u64>,
    pub initial_units: i64,
    /// Seconds per bucket.
    pub bucket_secs: i64,
    /// The sale's start (the first order; none yet: now) with `initial_units`, then one
    /// point per bucket, the last one at the database's now.
    pub points: Vec<BurnPoint>,
}

impl BurnDown {
    /// Units left at the end of the curve.
    pub fn remaining(&self) -> i64 {
        self.points.last().map_or(self.initial_units, |p| p.remaining)
    }
}

/// `a / b` rounded up, for positive `a` and `b`.
fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// The narrowest readable step that fits `span_secs` in [`MAX_BUCKETS`] buckets.
pub fn bucket_width(span_secs: i64) -> i64 {
    let needed = ceil_div(span_secs, MAX_BUCKETS);
    STEPS.iter().copied().find(|s| *s >= needed).unwrap_or_else(|| ceil_div(needed, 86400) * 86400)
}

/// Reads the burn-down of `product` (none: the whole sale).
pub async fn read(pool: &MySqlPool, product: Option<u64>) -> Result<BurnDown, OverviewError> {
    // 5,000 rows at most: the whole table costs less than a second statement.
    let (initial, products): (i64, i64) = sqlx::query_as(
        "SELECT CAST(COALESCE(SUM(initial_stock), 0) AS SIGNED), COUNT(*) FROM inventory \
         WHERE (? IS NULL OR product_id = ?)",
    )
    .bind(product)
    .bind(product)
    .fetch_one(pool)
    .await?;
    if let (Some(p), 0) = (product, products) {
        return Err(OverviewError::NoSuchProduct(p));
    }
    // The start: for one product its first order (a seek on the index); for the sale the
    // order with the lowest id, which is the first written within a few milliseconds (MIN()
    // over every product would scan the index). A unit stamped a little before it falls in
    // the first bucket.
    let first_sql = match product {
        Some(_) => "SELECT (SELECT created_at FROM orders WHERE product_id = ? ORDER BY created_at LIMIT 1), NOW(3)",
        None => "SELECT (SELECT created_at FROM orders ORDER BY id LIMIT 1), NOW(3)",
    };
    let mut first_q = sqlx::query_as::<_, (Option<NaiveDateTime>, NaiveDateTime)>(first_sql);
    if let Some(p) = product {
        first_q = first_q.bind(p);
    }
    let (first, now) = first_q.fetch_one(pool).await?;
    let Some(start) = first.filter(|f| *f < now) else {
        let at = first.map_or(now, |f| f.max(now));
        return Ok(BurnDown {
            product_id: product,
            initial_units: initial,
            bucket_secs: 1,
            points: vec![BurnPoint { at, remaining: initial, sold: 0 }],
        });
    };
    let span_us = (now - start).num_microseconds().unwrap_or(i64::MAX).max(1);
    let width = bucket_width(ceil_div(span_us, 1_000_000));
    let width_us = width * 1_000_000;
    let buckets = ceil_div(span_us, width_us).max(1) as usize;

    // Two statements, not `? IS NULL OR product_id = ?`: a prepared statement's plan cannot
    // know which, and would scan every product's orders for one.
    let by_product = if product.is_some() { " AND product_id = ?" } else { "" };
    let bucketed = |time_col: &str, filter: &str| {
        format!(
            "SELECT CAST(FLOOR(TIMESTAMPDIFF(MICROSECOND, ?, {time_col}) / ?) AS SIGNED) AS b, \
             CAST(SUM(buy_count) AS SIGNED) FROM orders WHERE TRUE{filter}{by_product} GROUP BY b"
        )
    };
    let sums = |sql: String| async move {
        let mut q = sqlx::query_as::<_, (i64, i64)>(&sql).bind(start).bind(width_us);
        if let Some(p) = product {
            q = q.bind(p);
        }
        q.fetch_all(pool).await
    };
    let taken = sums(bucketed("created_at", "")).await?;
    let returned = sums(bucketed("updated_at", " AND status IN ('CLOSED', 'CANCELLED')")).await?;
    Ok(curve(product, initial, start, now, width, buckets, &taken, &returned))
}

/// The points from the buckets' sums (bucket index, units); indices outside the sale are
/// clamped to its first and last bucket.
#[allow(clippy::too_many_arguments)]
fn curve(
    product_id: Option<u64>,
    initial: i64,
    start: NaiveDateTime,
    now: NaiveDateTime,
    width: i64,
    buckets: usize,
    taken: &[(i64, i64)],
    returned: &[(i64, i64)],
) -> BurnDown {
    let mut net = vec![0i64; buckets];
    let slot = |b: i64| (b.max(0) as usize).min(buckets - 1);
    for &(b, units) in taken {
        net[slot(b)] += units;
    }
    for &(b, units) in returned {
        net[slot(b)] -= units;
    }
    let mut points = Vec::with_capacity(buckets + 1);
    points.push(BurnPoint { at: start, remaining: initial, sold: 0 });
    let mut remaining = initial;
    for (i, sold) in net.into_iter().enumerate() {
        remaining -= sold;
        let end = start + chrono::Duration::seconds(width * (i as i64 + 1));
        points.push(BurnPoint { at: end.min(now), remaining, sold });
    }
    BurnDown { product_id, initial_units: initial, bucket_secs: width, points }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bucket_width_is_a_readable_step_that_fits_the_sale_in_at_most_120_buckets() {
        assert_eq!(bucket_width(1), 1);
        assert_eq!(bucket_width(120), 1);
        assert_eq!(bucket_width(121), 2);
        assert_eq!(bucket_width(3600), 30);
        assert_eq!(bucket_width(3 * 86400), 3600);
        assert_eq!(bucket_width(400 * 86400) % 86400, 0);
    }

    #[test]
    fn the_curve_takes_sold_units_and_gives_back_returned_ones_bucket_by_bucket() {
        let start = chrono::NaiveDate::from_ymd_opt(2026, 12, 1).unwrap().and_hms_opt(20, 0, 0).unwrap();
        let now = start + chrono::Duration::seconds(25);
        // 10 s buckets over 25 s: three; one unit stamped before the start, one returned.
        let c = curve(None, 100, start, now, 10, 3, &[(-1, 1), (0, 9), (2, 20)], &[(1, 3)]);
        let left: Vec<i64> = c.points.iter().map(|p| p.remaining).collect();
        assert_eq!(left, vec![100, 90, 93, 73]);
        assert_eq!(c.points.last().unwrap().at, now, "the last point is now, not the bucket's end");
        assert_eq!(c.remaining(), 73);
    }
}
