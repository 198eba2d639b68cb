//! When each fault was on. The timeline says it best (the runner records an inject and a
//! restore as they happen, late or early as they were); a timeline without fault events (a
//! runner that died before its first, an old run) falls back on the drill file's plan.

use serde::Serialize;

use crate::drills::events::{Event, TimedEvent};
use crate::drills::plan::{FaultStep, Plan};
use crate::drills::variant::runners_fault_zh;

/// One fault's time on, in seconds since the load started.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FaultWindow {
    pub fault: String,
    /// The fault's Chinese name in the drill file (`name_zh`), when it has one.
    pub fault_zh: Option<String>,
    pub target: String,
    pub action: String,
    pub start_s: f64,
    pub end_s: f64,
    /// Never restored in the timeline: the window runs to its last event.
    pub open: bool,
    /// Taken from the drill file, the timeline holding no fault event.
    pub planned: bool,
    /// The plan's parameters of the fault (latency, bandwidth, engines), when it has any.
    pub detail: String,
}

impl FaultWindow {
    /// The fault's name in `lang`: its `name_zh` in Chinese when the file gives one.
    pub fn name_in(&self, lang: super::Lang) -> &str {
        match (lang, &self.fault_zh) {
            (super::Lang::Zh, Some(zh)) => zh,
            _ => &self.fault,
        }
    }

    pub fn length_s(&self) -> f64 {
        self.end_s - self.start_s
    }
}

/// Every fault's window, in the order they began. `end_s` closes the windows left open.
pub fn fault_windows(timeline: &[TimedEvent], plan: Option<&Plan>, end_s: f64) -> Vec<FaultWindow> {
    let step = |name: &str| plan.and_then(|p| p.faults.iter().find(|f| f.name == name));
    let mut windows: Vec<FaultWindow> = Vec::new();
    for timed in timeline {
        let at_s = timed.offset_ms as f64 / 1000.0;
        match &timed.event {
            Event::FaultInjected { fault, target, action } => windows.push(FaultWindow {
                fault: fault.clone(),
                // A fault the runner adds itself (a variant's) is in no drill file.
                fault_zh: step(fault)
                    .and_then(|s| s.name_zh.clone())
                    .or_else(|| runners_fault_zh(fault).map(str::to_string)),
                target: target.clone(),
                action: action.clone(),
                start_s: at_s,
                end_s,
                open: true,
                planned: false,
                detail: step(fault).map(detail).unwrap_or_default(),
            }),
            Event::FaultRestored { fault } => {
                // A fault injected twice is restored in the order it was injected.
                if let Some(w) = windows.iter_mut().find(|w| w.open && &w.fault == fault) {
                    w.end_s = at_s;
                    w.open = false;
                }
            }
            _ => {}
        }
    }
    if windows.is_empty() {
        windows = plan.map(|p| p.faults.iter().map(planned).collect()).unwrap_or_default();
    }
    windows
}

fn planned(step: &FaultStep) -> FaultWindow {
    FaultWindow {
        fault: step.name.clone(),
        fault_zh: step.name_zh.clone(),
        target: file_name(&step.target),
        action: file_name(&step.action),
        start_s: step.at_s,
        end_s: step.at_s + step.for_s,
        open: false,
        planned: true,
        detail: detail(step),
    }
}

/// The plan's knobs of a fault, as `latency_ms=800 engines=1,2`.
fn detail(step: &FaultStep) -> String {
    let mut parts = Vec::new();
    if step.latency_ms > 0 {
        parts.push(format!("latency_ms={}", step.latency_ms));
    }
    if step.rate_kb > 0 {
        parts.push(format!("rate_kb={}", step.rate_kb));
    }
    if !step.engines.is_empty() {
        let engines: Vec<String> = step.engines.iter().map(u32::to_string).collect();
        parts.push(format!("engines={}", engines.join(",")));
    }
    parts.join(" ")
}

/// The name the drill file uses for a target or an action (its serde name, as the runner
/// records it in the timeline).
fn file_name<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(offset_ms: i64, event: Event) -> TimedEvent {
        TimedEvent { offset_ms, event }
    }

    fn injected(fault: &str) -> Event {
        Event::FaultInjected { fault: fault.into(), target: "redis".into(), action: "down".into() }
    }

    #[test]
    fn a_window_runs_from_its_inject_to_its_restore_and_one_never_restored_to_the_end() {
        let timeline = [
            at(10_000, injected("cut")),
            at(12_000, injected("slow")),
            at(25_000, Event::FaultRestored { fault: "cut".into() }),
        ];
        let windows = fault_windows(&timeline, None, 60.0);
        assert_eq!((windows[0].start_s, windows[0].end_s, windows[0].open), (10.0, 25.0, false));
        assert_eq!((windows[1].start_s, windows[1].end_s, windows[1].open), (12.0, 60.0, true));
    }

    #[test]
    fn without_fault_events_the_windows_come_from_the_drill_file() {
        let (plan, _) = Plan::builtin("redis-down").unwrap();
        let windows = fault_windows(&[], Some(&plan), 60.0);
        assert_eq!(windows.len(), plan.faults.len());
        let first = &plan.faults[0];
        assert_eq!((windows[0].start_s, windows[0].end_s), (first.at_s, first.at_s + first.for_s));
        assert!(windows[0].planned);
        assert_eq!(windows[0].target, "redis");
    }
}
