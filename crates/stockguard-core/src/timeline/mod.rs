//! The sale's timeline (issue 53): one list, in time order, of what happened to a sale, read
//! from the records that already exist, so the on-call engineer at 3 a.m. and the incident
//! review the morning after read one story instead of six screens.
//!
//! - [`event`]: an event (time, kind, product, actor, reason, outcome, the record behind it),
//!   the query that bounds a timeline (a window, a product, a limit) and the timeline read.
//! - `switch_changes`, `rewrite_runs`, `drill_runs`: our own sale's switch changes, fenced
//!   rewrites and drill runs (started, faults, verdict), each from its table (who from the
//!   linked audit row where the table keeps only a claimed name).
//! - `alert_acks`, `compensation_steps`: acknowledgements (taken, closed) and case steps, of
//!   our own sale or of a sale over its adapter (both kept by the sale's name).
//! - `audit_rows`: every other audited write action (a guided exit, an adapter sale's flag
//!   and repairs, compensation plans, roles, drill halts).
//! - [`markdown`]: a timeline as a Markdown table with a short summary, in English or Chinese.
//!
//! One path for both kinds of sale: [`read`] takes the [`Sale`] and reads where it keeps its
//! records ([`Sale::records`]: our database, or an adapter sale's state database). What only
//! our own sale has (the switch table, rewrite runs, drills) is read for our own sale alone.
//! Not kept anywhere yet, so not listed: an alert's onset and its clearing when nobody
//! acknowledged it, the readings' status changes, engine breaker trips.

pub mod event;
pub mod markdown;

mod alert_acks;
mod audit_rows;
mod compensation_steps;
mod drill_runs;
mod rewrite_runs;
mod switch_changes;

use chrono::NaiveDateTime;

pub use event::{parse_time, Event, EventKind, Query, RecordRef, Span, Timeline, MAX_LIMIT};

use crate::adapter::AdapterError;
use crate::sale::{Sale, SaleKind};
use crate::step::{Step as _, StepFailed};

/// Why a timeline could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TimelineError {
    /// An adapter sale with no state database keeps no records of its own.
    #[error(transparent)]
    Adapter(#[from] AdapterError),
    #[error(transparent)]
    Db(#[from] StepFailed),
    #[error("the window ends ({to}) before it begins ({from})")]
    EmptyWindow { from: NaiveDateTime, to: NaiveDateTime },
}

/// What every source reads by: the sale's name, the window, the product as its stored text,
/// how many rows at most.
pub(crate) struct Bounds<'a> {
    pub sale: &'a str,
    pub from: NaiveDateTime,
    pub to: NaiveDateTime,
    pub product: Option<String>,
    pub limit: u32,
}

/// A statement of a source, its arguments being bound.
type Statement<'q> = sqlx::query::Query<'q, sqlx::MySql, sqlx::mysql::MySqlArguments>;

impl Bounds<'_> {
    /// Binds the window, the product twice and the limit, in this order: the tail of a
    /// source's statement (`at >= ? AND at < ? AND (? IS NULL OR product = ?) ... LIMIT ?`).
    fn bind_rest<'q>(&'q self, statement: Statement<'q>) -> Statement<'q> {
        statement.bind(self.from).bind(self.to).bind(&self.product).bind(&self.product).bind(self.limit)
    }

    /// Runs a source's statement, named by its step.
    async fn fetch(
        &self,
        pool: &sqlx::MySqlPool,
        statement: Statement<'_>,
        step: &'static str,
    ) -> Result<Vec<sqlx::mysql::MySqlRow>, StepFailed> {
        statement.fetch_all(pool).await.step(step)
    }
}

/// The timeline of `sale` that `query` asks for: the newest `limit` events of the window, oldest
/// first.
pub async fn read(sale: &Sale, query: &Query) -> Result<Timeline, TimelineError> {
    let pool = sale.records()?;
    let (from, to) = match query.span {
        Span::Between { from, to } => (from, to),
        Span::Since(back) => {
            // The database's clock, as every record's time is.
            let now: NaiveDateTime =
                sqlx::query_scalar("SELECT NOW(3)").fetch_one(pool).await.step("reading the database's clock")?;
            let back = chrono::Duration::from_std(back).unwrap_or(chrono::Duration::MAX);
            // Just past now: a record written this millisecond is in the window.
            (now.checked_sub_signed(back).unwrap_or(NaiveDateTime::MIN), now + chrono::Duration::milliseconds(1))
        }
    };
    if to < from {
        return Err(TimelineError::EmptyWindow { from, to });
    }
    let limit = query.limit.clamp(1, MAX_LIMIT);
    // Each source reads one more than the limit: when any has more, the timeline says older
    // events were left out.
    let b =
        Bounds { sale: sale.name(), from, to, product: query.product.as_ref().map(|p| p.stored().0), limit: limit + 1 };
    let mut events = audit_rows::read(pool, &b).await?;
    events.extend(alert_acks::read(pool, &b).await?);
    events.extend(compensation_steps::read(pool, &b).await?);
    if sale.kind() == SaleKind::Ours {
        events.extend(switch_changes::read(pool, &b).await?);
        events.extend(rewrite_runs::read(pool, &b).await?);
        events.extend(drill_runs::read(pool, &b).await?);
    }
    let (events, truncated) = newest_in_order(events, limit as usize);
    Ok(Timeline { sale: sale.name().to_string(), from, to, product: query.product.clone(), events, truncated })
}

/// The newest `limit` of `events`, oldest first (ties: a drill's start first, its verdict
/// last, the rest in the order of their records), and
/// whether older ones were left out.
fn newest_in_order(mut events: Vec<Event>, limit: usize) -> (Vec<Event>, bool) {
    let key = |e: &Event| (e.at, e.kind.tie_rank(), e.record.table, e.record.id);
    events.sort_by(|a, b| key(a).cmp(&key(b)));
    let truncated = events.len() > limit;
    if truncated {
        events.drain(..events.len() - limit);
    }
    (events, truncated)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(secs: i64, id: u64) -> Event {
        Event {
            at: chrono::DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap().naive_utc(),
            kind: EventKind::Audit,
            product_id: None,
            actor: "a".into(),
            reason: String::new(),
            outcome: String::new(),
            detail: String::new(),
            record: RecordRef { table: "audit_log", id },
            audit_id: None,
        }
    }

    #[test]
    fn the_newest_events_are_kept_and_listed_oldest_first() {
        let (kept, truncated) = newest_in_order(vec![event(3, 3), event(1, 1), event(2, 2)], 2);
        assert_eq!(kept.iter().map(|e| e.record.id).collect::<Vec<_>>(), vec![2, 3]);
        assert!(truncated);
        let (all, truncated) = newest_in_order(vec![event(1, 2), event(1, 1)], 5);
        assert_eq!(all.iter().map(|e| e.record.id).collect::<Vec<_>>(), vec![1, 2], "a tie in record order");
        assert!(!truncated);
    }
}
