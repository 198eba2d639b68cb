//! A run's timeline: every event on one clock (milliseconds since the load started), stored
//! in `drill_events` as the run goes, so a report, a comparison or a replay can be made of
//! any run, even one whose runner died.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

use super::runs::DrillRunError;

/// One event. Stored as its `kind` (the tag) and the whole event as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Event {
    /// The run moved on: `rig`, `load`, `drain`, `verify`, `done`.
    Phase {
        phase: String,
    },
    FaultInjected {
        fault: String,
        target: String,
        action: String,
    },
    FaultRestored {
        fault: String,
    },
    /// The mode the engines report changed: how many sell from Redis, how many through the
    /// DB, and how many are on neither as far as their heartbeats say (paused by the guided
    /// exit, or no fresh heartbeat). Kills and stops of the runner's processes are faults
    /// (`fault_injected` / `fault_restored`).
    Mode {
        redis_path: u32,
        db_path: u32,
        unknown: u32,
    },
    /// The runner moved the switch (the guided exit) or rewrote Redis.
    Repair {
        what: String,
        outcome: String,
    },
    /// One second of load, as the buyers saw it.
    Load(LoadSecond),
    /// One sampler tick, from the DB ledger and Redis.
    Tick(TickFigures),
    /// An invariant checked false (only failures are written; a tick with none holds them all).
    Violation {
        invariant: String,
        figure: String,
    },
    Abort {
        reason: String,
    },
    Halt {
        reason: String,
    },
    Note {
        text: String,
    },
}

impl Event {
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Phase { .. } => "phase",
            Self::FaultInjected { .. } => "fault_injected",
            Self::FaultRestored { .. } => "fault_restored",
            Self::Mode { .. } => "mode",
            Self::Repair { .. } => "repair",
            Self::Load(_) => "load",
            Self::Tick(_) => "tick",
            Self::Violation { .. } => "violation",
            Self::Abort { .. } => "abort",
            Self::Halt { .. } => "halt",
            Self::Note { .. } => "note",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LoadSecond {
    pub sent: u64,
    /// Requests not sent because the generator was more than a second behind the schedule
    /// (every connection busy with slow answers): not the buyers' errors, and not sent late
    /// in a burst the schedule never had.
    #[serde(default)]
    pub skipped: u64,
    pub accepted: u64,
    /// The sale's own answers that are not errors: sold out, per-buyer limit.
    pub refused: u64,
    /// Everything else, by kind (`timeout`, `connect`, `503`, `DEGRADED_BUSY`, ...).
    pub errors: BTreeMap<String, u64>,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

impl LoadSecond {
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TickFigures {
    /// Sum over the drill's products of Redis stock minus what it should be.
    pub drift: i64,
    /// The largest drift of one product, by absolute value.
    pub drift_max_abs: i64,
    pub redis_stock: i64,
    pub db_stock: i64,
    pub inflight: i64,
    /// Reservation messages not yet persisted.
    pub backlog: u64,
    /// Units of live orders beyond initial stock (the oversell invariant).
    pub oversold_units: i64,
    /// Engines on the Redis path, on the DB path, unheard.
    pub redis_path: u32,
    pub db_path: u32,
    /// Whether Redis could be read at all this tick (through the runner's own link).
    pub redis_reachable: bool,
    /// Products whose Redis went back in time (a failover to a lagging replica, a flush):
    /// their reading cannot be corrected to the cut.
    #[serde(default)]
    pub history_lost: u32,
}

/// An event as stored, with its time.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TimedEvent {
    pub offset_ms: i64,
    #[serde(flatten)]
    pub event: Event,
}

/// Appends an event to a run's timeline.
pub async fn record(pool: &MySqlPool, run_id: u64, offset_ms: i64, event: &Event) -> Result<(), DrillRunError> {
    sqlx::query("INSERT INTO drill_events (run_id, offset_ms, kind, detail) VALUES (?, ?, ?, ?)")
        .bind(run_id)
        .bind(offset_ms)
        .bind(event.kind())
        .bind(serde_json::to_value(event).expect("an event serializes"))
        .execute(pool)
        .await?;
    Ok(())
}

/// A run's timeline in order. Events a newer version wrote and this one cannot read are
/// skipped (a report of an old run still works after an upgrade).
pub async fn timeline(pool: &MySqlPool, run_id: u64) -> Result<Vec<TimedEvent>, DrillRunError> {
    let rows: Vec<(i64, serde_json::Value)> =
        sqlx::query_as("SELECT offset_ms, detail FROM drill_events WHERE run_id = ? ORDER BY offset_ms, id")
            .bind(run_id)
            .fetch_all(pool)
            .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(offset_ms, detail)| {
            serde_json::from_value(detail).ok().map(|event| TimedEvent { offset_ms, event })
        })
        .collect())
}

/// The events of a run written after the event `after` (an id this returned before, 0 for the
/// first call), in the order they were written, with the newest id seen: what a window that
/// watches a run asks for every second, so each event crosses once.
pub async fn since(pool: &MySqlPool, run_id: u64, after: u64) -> Result<(Vec<TimedEvent>, u64), DrillRunError> {
    let rows: Vec<(u64, i64, serde_json::Value)> =
        sqlx::query_as("SELECT id, offset_ms, detail FROM drill_events WHERE run_id = ? AND id > ? ORDER BY id")
            .bind(run_id)
            .bind(after)
            .fetch_all(pool)
            .await?;
    let newest = rows.last().map_or(after, |(id, _, _)| *id);
    let events = rows
        .into_iter()
        .filter_map(|(_, offset_ms, detail)| {
            serde_json::from_value(detail).ok().map(|event| TimedEvent { offset_ms, event })
        })
        .collect();
    Ok((events, newest))
}

/// Adds events read with [`since`] to a timeline kept in offset order, as [`timeline`] reads
/// it: events of one offset in the order they were written.
pub fn merge(timeline: &mut Vec<TimedEvent>, new: Vec<TimedEvent>) {
    timeline.extend(new);
    // Stable: of one offset, the events already held were written before the new ones.
    timeline.sort_by_key(|e| e.offset_ms);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_events_take_their_place_by_offset_after_those_of_the_same_offset_held_before() {
        let note = |offset_ms, text: &str| TimedEvent { offset_ms, event: Event::Note { text: text.into() } };
        let mut timeline = vec![note(0, "a"), note(2000, "b")];
        merge(&mut timeline, vec![note(3000, "d"), note(2000, "c")]);
        let texts: Vec<String> = timeline
            .iter()
            .map(|e| match &e.event {
                Event::Note { text } => text.clone(),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(texts, ["a", "b", "c", "d"]);
    }

    #[test]
    fn an_event_round_trips_through_its_stored_json_with_its_kind_as_the_tag() {
        let tick = Event::Tick(TickFigures { drift: -3, backlog: 7, redis_reachable: true, ..Default::default() });
        let json = serde_json::to_value(&tick).unwrap();
        assert_eq!(json["kind"], tick.kind());
        assert_eq!(serde_json::from_value::<Event>(json).unwrap(), tick);
        let halt = Event::Halt { reason: "stop".into() };
        assert_eq!(serde_json::to_value(&halt).unwrap()["kind"], "halt");
    }
}
