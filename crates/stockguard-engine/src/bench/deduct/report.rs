//! What the `deduct` benchmark reports: every sale as counted in the DB, one summary cell per
//! strategy and pool size over the rounds, and the ratios to the conditional update.

use serde::Serialize;

use super::strategy::Strategy;
use super::DeductPlan;
use crate::bench::{Figure, Report};

/// One sale: one strategy at one pool size in one round, from full stock to the last buyer.
#[derive(Debug, Clone, Serialize)]
pub struct DeductSale {
    pub strategy: Strategy,
    pub connections: u32,
    /// 0-based.
    pub round: u32,
    /// 1-based position in the whole run.
    pub run_order: usize,
    /// Committed order transactions per second, from the start to the last commit.
    pub committed_per_s: f64,
    /// Order transactions the workers committed.
    pub committed: u64,
    /// Optimistic attempts after the first.
    pub retries: u64,
    /// Buyers whose optimistic attempts all lost.
    pub gave_up: u64,
    /// Buyers told "sold out".
    pub sold_out: u64,
    /// Counted in the DB after the sale.
    pub orders_in_db: u64,
    pub units_in_db: i64,
    pub final_stock: i64,
    /// Units ordered beyond the initial stock (`units_in_db - initial_stock`, at least 0).
    pub oversold: i64,
    /// Units ordered that never came off the stock (`units_in_db + final_stock -
    /// initial_stock`): lost updates. Zero for a correct strategy, sold out or not.
    pub lost_deductions: i64,
    /// Time until every buyer had an answer.
    pub elapsed_ms: f64,
}

/// One strategy at one pool size over all rounds: the sale with the median tx/s (the lower of
/// the two middle ones for an even count), the range, and the worst oversell of any sale.
#[derive(Debug, Clone, Serialize)]
pub struct DeductCell {
    pub strategy: Strategy,
    pub connections: u32,
    pub sales: usize,
    pub median_sale: DeductSale,
    pub committed_per_s_min: f64,
    pub committed_per_s_max: f64,
    pub oversold_worst: i64,
    pub lost_deductions_worst: i64,
}

/// The `deduct` benchmark's result.
#[derive(Debug, Clone, Serialize)]
pub struct DeductReport {
    pub bench: String,
    pub plan: DeductPlan,
    pub cells: Vec<DeductCell>,
    /// Committed tx/s of each strategy over the conditional update's in the same round and
    /// pool size, the median over the rounds.
    pub ratios: Vec<Figure>,
    pub sales: Vec<DeductSale>,
    pub notes: Vec<String>,
}

impl DeductReport {
    pub fn new(plan: &DeductPlan, sales: Vec<DeductSale>, notes: Vec<String>) -> Self {
        let mut cells = Vec::new();
        let mut ratios = Vec::new();
        for &c in &plan.connections {
            for strategy in Strategy::ALL {
                let of = |s: Strategy| sales.iter().filter(move |r| r.strategy == s && r.connections == c);
                if let Some(cell) = cell(strategy, c, &of(strategy).collect::<Vec<_>>()) {
                    cells.push(cell);
                }
                if strategy == Strategy::ConditionalUpdate {
                    continue;
                }
                // Within a round a pool size runs its four sales back to back: their ratio is
                // what holds on a noisy machine, more than a ratio of medians.
                let per_round: Vec<f64> = of(strategy)
                    .filter_map(|r| {
                        let base = of(Strategy::ConditionalUpdate).find(|b| b.round == r.round)?;
                        Some(r.committed_per_s / base.committed_per_s)
                    })
                    .collect();
                if let Some(v) = median(per_round) {
                    ratios.push(Figure::new(&ratio_name(strategy, c), v, ""));
                }
            }
        }
        Self { bench: "deduct".into(), plan: plan.clone(), cells, ratios, sales, notes }
    }

    pub fn ratio(&self, strategy: Strategy, connections: u32) -> Option<f64> {
        let name = ratio_name(strategy, connections);
        self.ratios.iter().find(|f| f.name == name).map(|f| f.value)
    }
}

fn ratio_name(strategy: Strategy, connections: u32) -> String {
    format!("{} / conditional update, {connections} connections", strategy.label())
}

fn cell(strategy: Strategy, connections: u32, sales: &[&DeductSale]) -> Option<DeductCell> {
    let mut by_rate = sales.to_vec();
    by_rate.sort_by(|a, b| a.committed_per_s.total_cmp(&b.committed_per_s));
    Some(DeductCell {
        strategy,
        connections,
        sales: sales.len(),
        median_sale: (*middle(&by_rate)?).clone(),
        committed_per_s_min: by_rate.first()?.committed_per_s,
        committed_per_s_max: by_rate.last()?.committed_per_s,
        oversold_worst: sales.iter().map(|s| s.oversold).max()?,
        lost_deductions_worst: sales.iter().map(|s| s.lost_deductions).max()?,
    })
}

/// The middle value; the lower of the two middle ones for an even count.
fn median<T: Copy + PartialOrd>(mut v: Vec<T>) -> Option<T> {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    middle(&v).copied()
}

/// The middle element of a sorted slice; the lower of the two middle ones for an even count.
fn middle<T>(sorted: &[T]) -> Option<&T> {
    sorted.get(sorted.len().checked_sub(1)? / 2)
}

impl Report for DeductReport {
    fn to_text(&self) -> String {
        let p = &self.plan;
        let mut out = format!(
            "bench deduct: one hot product, stock {}, {} buyers of {} unit(s) each; {} round(s) of every strategy at every pool size, interleaved\n",
            p.initial_stock, p.buyers, p.qty, p.rounds
        );
        out.push_str("  per strategy and pool size: the sale with the median tx/s, the range over all sales, the worst oversell\n");
        out.push_str(&format!(
            "  {:<22} {:>5} {:>6} {:>11} {:>6} {:>7} {:>7} {:>8} {:>5} {:>8} {:>5} {:>8}\n",
            "strategy",
            "conns",
            "tx/s",
            "(min-max)",
            "orders",
            "retries",
            "gave up",
            "sold out",
            "stock",
            "oversold",
            "lost",
            "worst os"
        ));
        for c in &self.cells {
            let m = &c.median_sale;
            out.push_str(&format!(
                "  {:<22} {:>5} {:>6.0} {:>11} {:>6} {:>7} {:>7} {:>8} {:>5} {:>8} {:>5} {:>8}\n",
                c.strategy.label(),
                c.connections,
                m.committed_per_s,
                format!("({:.0}-{:.0})", c.committed_per_s_min, c.committed_per_s_max),
                m.orders_in_db,
                m.retries,
                m.gave_up,
                m.sold_out,
                m.final_stock,
                m.oversold,
                m.lost_deductions,
                c.oversold_worst
            ));
        }
        out.push_str(&format!("  {:<34}", "tx/s / conditional update"));
        for c in &p.connections {
            out.push_str(&format!(" {:>9}", format!("{c} conns")));
        }
        out.push('\n');
        for strategy in &Strategy::ALL[1..] {
            out.push_str(&format!("  {:<34}", strategy.label()));
            for &c in &p.connections {
                match self.ratio(*strategy, c) {
                    Some(v) => out.push_str(&format!(" {v:>9.3}")),
                    None => out.push_str(&format!(" {:>9}", "-")),
                }
            }
            out.push('\n');
        }
        for n in &self.notes {
            out.push_str(&format!("  note: {n}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn the_median_of_an_even_count_is_the_lower_middle_one() {
        assert_eq!(median(vec![40, 10, 30, 20]), Some(20));
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median::<u64>(vec![]), None);
    }
}
