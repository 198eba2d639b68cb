//! What the timeline is made of: an [`Event`] (when, what, which product, who, why, what came
//! of it, and the record behind it), the [`Query`] that bounds a timeline, and the
//! [`Timeline`] read. A leaf: the sources and the renderers read it, it reads none of them.

use chrono::NaiveDateTime;
use serde::Serialize;

use crate::product_id::ProductId;

/// What happened, by the record that says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A degrade switch change (`switch_changes`; over an adapter, the sale's own flag set).
    SwitchChange,
    /// A guided exit from DB mode, as a whole (its pause, its revisions).
    GuidedExit,
    /// Our fenced rewrite of Redis stock (`rewrite_runs`), dry runs included.
    Rewrite,
    /// The delta repair of a sale read over its adapter.
    Repair,
    /// An alert acknowledged (`alert_acks`).
    AlertAcknowledged,
    /// An acknowledgement closed by itself: its alert cleared, or its time was up.
    AlertAckClosed,
    /// A step of a compensation case (opened, planned, proposed, approved, executed, closed).
    CompensationStep,
    /// A drill run started.
    DrillStarted,
    /// A drill's fault injected or restored (`drill_events`).
    DrillFault,
    /// A drill run ended, with its verdict.
    DrillVerdict,
    /// Any other write action of the audit log (roles applied, a drill halted, a baseline).
    Audit,
}

impl EventKind {
    pub const ALL: [Self; 11] = [
        Self::SwitchChange,
        Self::GuidedExit,
        Self::Rewrite,
        Self::Repair,
        Self::AlertAcknowledged,
        Self::AlertAckClosed,
        Self::CompensationStep,
        Self::DrillStarted,
        Self::DrillFault,
        Self::DrillVerdict,
        Self::Audit,
    ];

    /// Its name on the wire and in the table (`switch_change`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SwitchChange => "switch_change",
            Self::GuidedExit => "guided_exit",
            Self::Rewrite => "rewrite",
            Self::Repair => "repair",
            Self::AlertAcknowledged => "alert_acknowledged",
            Self::AlertAckClosed => "alert_ack_closed",
            Self::CompensationStep => "compensation_step",
            Self::DrillStarted => "drill_started",
            Self::DrillFault => "drill_fault",
            Self::DrillVerdict => "drill_verdict",
            Self::Audit => "audit",
        }
    }

    /// Where an event goes among events of the same millisecond: a drill's start first, its
    /// verdict last, everything else between (then by its record).
    pub fn tie_rank(self) -> u8 {
        match self {
            Self::DrillStarted => 0,
            Self::DrillVerdict => 2,
            _ => 1,
        }
    }
}

/// The record behind an event: its table and its id there (a switch change's id is its
/// revision).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RecordRef {
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub table: &'static str,
    pub id: u64,
}

impl std::fmt::Display for RecordRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}#{}", self.table, self.id)
    }
}

/// One thing that happened to the sale.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "TimelineEvent"))]
pub struct Event {
    /// When, by the database's clock.
    pub at: NaiveDateTime,
    pub kind: EventKind,
    /// The product it concerns; none for the whole sale (a global switch change, a drill).
    pub product_id: Option<ProductId>,
    /// Who: the server's word where the record keeps it (the audit row's account), else the
    /// name the record keeps.
    pub actor: String,
    pub reason: String,
    /// What came of it, in the record's own word (`DEGRADED`, `APPLIED`, `APPROVE`, `PASSED`).
    pub outcome: String,
    /// The figures of the record, in a few words (scope and revision, before and after, fence).
    pub detail: String,
    pub record: RecordRef,
    /// The audit row of the same action, where one is linked.
    pub audit_id: Option<u64>,
}

/// How far back a timeline reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    /// The last stretch up to now (the database's now).
    Since(std::time::Duration),
    /// From one time (inclusive) to another (exclusive), by the database's clock.
    Between { from: NaiveDateTime, to: NaiveDateTime },
}

/// What to read.
#[derive(Debug, Clone)]
pub struct Query {
    pub span: Span,
    /// Only this product's events and those of the whole sale.
    pub product: Option<ProductId>,
    /// At most this many events: the newest, listed oldest first.
    pub limit: u32,
}

/// The most events a timeline lists.
pub const MAX_LIMIT: u32 = 10_000;

/// A timeline read: its window, its events oldest first.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Timeline {
    /// The sale's name (an adapter sale's; empty for our own).
    pub sale: String,
    pub from: NaiveDateTime,
    pub to: NaiveDateTime,
    pub product: Option<ProductId>,
    pub events: Vec<Event>,
    /// Older events of the window were left out to keep to the limit.
    pub truncated: bool,
}

/// A time as a person types it, in UTC: `2026-12-07T20:00:00Z` (any offset), or without an
/// offset `2026-12-07 20:00`, `2026-12-07T20:00:00.250`.
pub fn parse_time(text: &str) -> Option<NaiveDateTime> {
    let text = text.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Some(t.naive_utc());
    }
    ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_is_read_with_or_without_an_offset_and_always_in_utc() {
        let at = |s| parse_time(s).map(|t| t.to_string());
        assert_eq!(at("2026-12-07T20:00:00Z").as_deref(), Some("2026-12-07 20:00:00"));
        assert_eq!(at("2026-12-08T04:00:00+08:00").as_deref(), Some("2026-12-07 20:00:00"));
        assert_eq!(at("2026-12-07 20:00").as_deref(), Some("2026-12-07 20:00:00"));
        assert_eq!(at("2026-12-07T20:00:00.250").as_deref(), Some("2026-12-07 20:00:00.250"));
        assert_eq!(at("yesterday"), None);
    }

    #[test]
    fn every_kind_has_its_own_name() {
        let names: std::collections::HashSet<_> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(names.len(), EventKind::ALL.len());
        let json = serde_json::to_string(&EventKind::AlertAckClosed).unwrap();
        assert_eq!(json, "\"alert_ack_closed\"");
    }
}
