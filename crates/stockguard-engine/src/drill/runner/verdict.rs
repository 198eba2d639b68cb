//! What a run comes to: the figures gathered tick by tick ([`Record`]), the buyers' record
//! checked against the DB ([`check_orders`]), the sale led back to Redis ([`lead_back`]),
//! and each invariant and declared SLO judged ([`Record::summary`]).
//!
//! Beside the invariants, two checks say whether the run proved anything (kind `proof`): each
//! of the file's faults took effect inside its window, and the rig's engines were back at the
//! end. A run that breaks no invariant but fails either is `INCONCLUSIVE`, not `PASSED`
//! ([`status_of`]).

use std::collections::HashSet;
use std::time::Duration;

use stockguard_core::connect::Connections;
use stockguard_core::drills::events::{Event, LoadSecond, TickFigures};
use stockguard_core::drills::plan::{Plan, Target};
use stockguard_core::drills::summary::{AffectedOrder, Check, Figures, Summary};
use stockguard_core::drills::RunStatus;
use stockguard_core::switch::{self, ExitOptions, Scope};

use super::faults::Outcomes;
use super::load::{Finished, Sent};
use super::RunnerError;
use crate::load::verify::outcomes_of;

/// A run must send at least this share of its schedule to pass: one whose load fell far behind
/// (a loaded machine, a stalled generator) did not test what its file says.
const SENT_SHARE_TO_PASS: f64 = 0.9;

/// Drift is expected while a fault is on and for this long after it (the engines notice
/// Redis is back, the guided exit rebuilds it), unless the file declares a recovery SLO. The
/// short form scales it with its timeline, down to [`MIN_RECOVERY_ALLOWANCE_MS`].
const RECOVERY_ALLOWANCE_MS: i64 = 10_000;

/// The recovery allowance of a short run is never below this: a breaker's healthy probes, the
/// leader's settling and the guided exit's rebuild take their own time whatever the load.
const MIN_RECOVERY_ALLOWANCE_MS: i64 = 5_000;

/// A fault's effect may show this long after its window: a tick reads once a second, an
/// engine's heartbeat counts as unheard after 3 s, and a reply a fault held arrives after it.
const EFFECT_GRACE_MS: i64 = 3_000;

/// Buyer errors inside a fault's window count as its effect from this many, and at least this
/// share of the window's requests, more than twice the share outside every window.
const EFFECT_MIN_ERRORS: u64 = 3;
const EFFECT_MIN_ERROR_SHARE: f64 = 0.01;

/// A window's median p99 counts as the fault's latency when it is at least twice the median p99
/// outside every window and this much above it.
const EFFECT_MIN_LATENCY_MS: f64 = 20.0;

/// A backlog inside a fault's window counts as its effect from this many messages, and more
/// than twice the largest outside every window.
const EFFECT_MIN_BACKLOG: u64 = 10;

/// The rig counts as back when every engine is at one of the run's last this many ticks.
const END_TICKS: usize = 3;

/// The check kind of what says whether the run proved anything.
pub const PROOF: &str = "proof";

pub struct Record {
    plan: Plan,
    /// The short form's factor, if any (the recovery allowance scales with it).
    short: Option<f64>,
    products: Vec<u64>,
    /// The drill file's faults by name; a variant's fault has no window here.
    drill_faults: Vec<String>,
    /// Each fault's window on the load's clock: (fault, start, end once restored).
    windows: Vec<(String, i64, Option<i64>)>,
    sent: u64,
    skipped: u64,
    accepted: u64,
    errors: u64,
    accepted_per_s: Vec<u64>,
    /// Each load second as judged for a fault's effect: (second, sent, errors, p99 ms).
    seconds: Vec<(u64, u64, u64, f64)>,
    /// What a fault did that shows at once it took effect (a rewrite holder paused, orders
    /// made due, a master failed over), by fault name.
    bit_at_once: Vec<(String, String)>,
    ticks: Vec<(i64, TickFigures)>,
    worst_oversold: i64,
    redis_negative_ticks: u32,
    drift_outside: i64,
    /// The largest drift judged inside a fault's window or its recovery allowance (allowed).
    drift_inside: i64,
    to_db_path: Option<Duration>,
    propagation_ms: Option<u64>,
    recovered_at: Option<i64>,
    drift_confirmed: Option<u32>,
    /// The last tick's drift, judged at the next tick (see `tick`).
    pending_drift: Option<(i64, i64)>,
}

impl Record {
    pub fn new(plan: &Plan, short: Option<f64>, products: Vec<u64>, drill_faults: Vec<String>) -> Self {
        Self {
            plan: plan.clone(),
            short,
            products,
            drill_faults,
            windows: Vec::new(),
            sent: 0,
            skipped: 0,
            accepted: 0,
            errors: 0,
            accepted_per_s: Vec::new(),
            seconds: Vec::new(),
            bit_at_once: Vec::new(),
            ticks: Vec::new(),
            worst_oversold: 0,
            redis_negative_ticks: 0,
            drift_outside: 0,
            drift_inside: 0,
            to_db_path: None,
            propagation_ms: None,
            recovered_at: None,
            drift_confirmed: None,
            pending_drift: None,
        }
    }

    pub fn saw(&mut self, event: &Event, offset_ms: i64) {
        match event {
            Event::FaultInjected { fault, .. } | Event::FaultRestored { fault }
                if !self.drill_faults.contains(fault) => {}
            Event::FaultInjected { fault, .. } => self.windows.push((fault.clone(), offset_ms, None)),
            Event::FaultRestored { fault } => {
                if let Some(open) = self.windows.iter_mut().find(|(f, _, end)| f == fault && end.is_none()) {
                    open.2 = Some(offset_ms);
                }
            }
            _ => {}
        }
    }

    pub fn to_db_path(&mut self, took: Duration) {
        self.to_db_path.get_or_insert(took);
    }

    /// Ticks from the failover to its drift confirmed.
    pub fn drift_confirmed(&mut self, ticks: Option<u32>) {
        self.drift_confirmed = ticks;
    }

    pub fn propagation(&mut self, ms: Option<u64>) {
        self.propagation_ms = ms;
    }

    /// What a fault did that proves at once it took effect.
    pub fn bit(&mut self, fault: &str, what: String) {
        if self.drill_faults.iter().any(|f| f == fault) {
            self.bit_at_once.push((fault.to_string(), what));
        }
    }

    /// The recovery allowance: the file's recovery SLO, else 10 s scaled by the short form's
    /// factor, never below 5 s (see [`recovery_allowance_ms`]).
    fn allowance(&self) -> i64 {
        recovery_allowance_ms(self.plan.slo.recovery_s, self.short)
    }

    /// Within a fault's window, or its recovery allowance after it.
    pub fn in_fault_window(&self, offset_ms: i64) -> bool {
        let allowance = self.allowance();
        self.windows.iter().any(|(_, start, end)| *start <= offset_ms && end.is_none_or(|e| offset_ms <= e + allowance))
    }

    /// Every drill fault injected so far has been restored.
    pub fn windows_closed(&self) -> bool {
        self.windows.iter().all(|(_, _, end)| end.is_some())
    }

    fn judge_drift(&mut self, offset_ms: i64, drift: i64) -> Option<(String, String)> {
        if self.in_fault_window(offset_ms) {
            self.drift_inside = self.drift_inside.max(drift.abs());
            return None;
        }
        let first = self.drift_outside == 0;
        self.drift_outside = self.drift_outside.max(drift.abs());
        first.then(|| ("drift_outside_faults".to_string(), format!("drift {drift}")))
    }

    /// Judges the drift still waiting (the last tick's), once nothing more can arrive.
    pub fn settle(&mut self) -> Option<(String, String)> {
        let (at, drift) = self.pending_drift.take()?;
        self.judge_drift(at, drift)
    }

    fn last_fault_end(&self) -> Option<i64> {
        if !self.windows_closed() {
            return None;
        }
        self.windows.iter().filter_map(|(_, _, end)| *end).max()
    }

    /// Takes in the load's `second` (from its start).
    pub fn second(&mut self, second: u64, figures: &LoadSecond) {
        self.seconds.push((second, figures.sent, figures.error_count(), figures.p99_ms));
        self.sent += figures.sent;
        self.skipped += figures.skipped;
        self.accepted += figures.accepted;
        self.errors += figures.error_count();
        self.accepted_per_s.push(figures.accepted);
    }

    /// Takes a tick in; returns the invariants it breaks, each with its figure.
    pub fn tick(&mut self, figures: &TickFigures, negative: u32, offset_ms: i64) -> Vec<(String, String)> {
        let mut broken = Vec::new();
        self.worst_oversold = self.worst_oversold.max(figures.oversold_units);
        if figures.oversold_units > 0 {
            broken.push(("oversell".into(), format!("{} units beyond stock", figures.oversold_units)));
        }
        if negative > 0 {
            self.redis_negative_ticks += 1;
            broken.push((
                "redis_stock_negative".into(),
                format!("{negative} products below zero in Redis beyond the releases owed"),
            ));
        }
        // Drift is judged one tick late: a fault that began just before this tick's reading
        // is announced after it (the timeline is another task), with its true start.
        if let Some((at, drift)) = self.pending_drift.take() {
            broken.extend(self.judge_drift(at, drift));
        }
        // While an engine sells through the DB, Redis is stale by design until the guided exit
        // rebuilds it: that drift is the fault's, not a defect.
        if figures.redis_reachable && figures.db_path == 0 && figures.drift_max_abs != 0 {
            self.pending_drift = Some((offset_ms, figures.drift_max_abs));
        }
        if self.recovered_at.is_none() {
            if let Some(end) = self.last_fault_end() {
                let engines = self.plan.rig.engines;
                let back = figures.drift == 0 && figures.db_path == 0 && figures.redis_path >= engines;
                if offset_ms >= end && back {
                    self.recovered_at = Some(offset_ms);
                }
            }
        }
        self.ticks.push((offset_ms, figures.clone()));
        broken
    }

    /// How many times faster than orders arrived the backlog was worked off after its peak.
    fn catch_up(&self) -> (u64, Option<f64>) {
        let Some((peak_i, peak)) = self.ticks.iter().enumerate().max_by_key(|(_, (_, t))| t.backlog) else {
            return (0, None);
        };
        let peak_backlog = peak.1.backlog;
        if peak_backlog < 10 {
            return (peak_backlog, None);
        }
        let seconds = self.accepted_per_s.len().max(1) as f64;
        let arrival = self.accepted as f64 / seconds;
        let cleared = self.ticks[peak_i..].iter().find(|(_, t)| t.backlog * 100 <= peak_backlog);
        let multiple = cleared.and_then(|(at, _)| {
            let took_s = (*at - peak.0) as f64 / 1000.0;
            // Worked off: the peak plus what arrived meanwhile.
            let arrived = arrival * took_s;
            (took_s > 0.0 && arrival > 0.0).then(|| (peak_backlog as f64 + arrived) / took_s / arrival)
        });
        (peak_backlog, multiple)
    }

    /// `planned`: the requests the schedule held.
    #[allow(clippy::too_many_arguments)]
    pub fn summary(
        &self,
        planned: u64,
        orders: &OrderCheck,
        load: &Finished,
        outcomes: &Outcomes,
        affected_orders: Vec<AffectedOrder>,
        schedule_hash: &str,
        variant: Option<String>,
    ) -> Summary {
        let (backlog_peak, catch_up_multiple) = self.catch_up();
        let final_drift = self.ticks.last().map_or(0, |(_, t)| t.drift_max_abs.abs());
        let looks = load.follow_ups.status_looks.load(std::sync::atomic::Ordering::Relaxed);
        let figures = Figures {
            sent: self.sent,
            skipped: self.skipped,
            planned,
            accepted: self.accepted,
            oversold_units: self.worst_oversold,
            lost: orders.lost,
            duplicated: orders.duplicated,
            failed_back: orders.failed_back,
            unannounced_orders: orders.unannounced,
            buyer_error_rate: if self.sent == 0 { 0.0 } else { self.errors as f64 / self.sent as f64 },
            p50_ms: load.p50_ms,
            p99_ms: load.p99_ms,
            time_to_db_path_ms: self.to_db_path.map(|d| d.as_millis() as u64),
            recovery_s: self.recovered_at.zip(self.last_fault_end()).map(|(at, end)| (at - end).max(0) as f64 / 1000.0),
            drift_peak: self.ticks.iter().map(|(_, t)| t.drift_max_abs.abs()).max().unwrap_or(0),
            backlog_peak,
            catch_up_multiple,
            switch_propagation_ms: self.propagation_ms,
            stale_writes: self.plan.faults.iter().any(|f| f.target == Target::Rewrite).then_some(outcomes.stale_writes),
            drift_confirmed_ticks: self.drift_confirmed,
            status_not_found: (looks > 0)
                .then(|| load.follow_ups.status_not_found.load(std::sync::atomic::Ordering::Relaxed)),
        };
        let mut checks = vec![
            invariant("oversell", figures.oversold_units == 0, format!("{} units", figures.oversold_units), "0"),
            invariant(
                "redis_stock_never_negative",
                self.redis_negative_ticks == 0,
                format!("{} ticks", self.redis_negative_ticks),
                "0",
            ),
            invariant("no_accepted_order_lost", figures.lost == 0, figures.lost.to_string(), "0"),
            invariant("no_duplicate_order", figures.duplicated == 0, figures.duplicated.to_string(), "0"),
            invariant(
                "no_drift_outside_faults",
                self.drift_outside == 0,
                self.drift_outside_figure(),
                &format!("0 outside each fault's window and its {} s recovery allowance", seconds(self.allowance())),
            ),
            invariant("drift_zero_at_end", final_drift == 0, format!("{final_drift} units"), "0"),
        ];
        checks.push(invariant(
            "load_sent_as_planned",
            sent_enough(figures.sent, planned),
            sent_figure(figures.sent, planned),
            &format!(">= {:.0}% of the schedule", SENT_SHARE_TO_PASS * 100.0),
        ));
        if self.plan.faults.iter().any(|f| f.target == Target::RedisMaster) {
            let confirmed = figures.drift_confirmed_ticks;
            checks.push(invariant(
                "failover_drift_confirmed",
                confirmed.is_some_and(|t| t <= 2),
                confirmed.map_or("never".into(), |t| format!("{t} ticks after the failover")),
                "<= 2 ticks",
            ));
            // A buyer told ACCEPTED is never told FAILED afterwards, failover or not (issue 54).
            checks.push(invariant(
                "accepted_is_final",
                figures.failed_back == 0,
                format!("{} accepted orders failed back", figures.failed_back),
                "0",
            ));
        }
        if let Some(stale) = figures.stale_writes {
            checks.push(invariant("no_stale_rewrite", stale == 0, stale.to_string(), "0"));
        }
        if let Some(missing) = figures.status_not_found {
            checks.push(invariant(
                "accepted_orders_always_found",
                missing == 0,
                format!("{missing} of {looks} looks answered not found"),
                "0",
            ));
        }
        let slo = &self.plan.slo;
        if let Some(bound) = slo.time_to_db_path_ms {
            let got = figures.time_to_db_path_ms;
            checks.push(slo_check(
                "time_to_db_path",
                got.is_some_and(|v| v <= bound),
                got.map(|v| format!("{v} ms")),
                format!("<= {bound} ms"),
            ));
        }
        if let Some(bound) = slo.recovery_s {
            let got = figures.recovery_s;
            checks.push(slo_check(
                "recovery_time",
                got.is_some_and(|v| v <= bound),
                got.map(|v| format!("{v:.1} s")),
                format!("<= {bound} s"),
            ));
        }
        if let Some(bound) = slo.buyer_error_rate {
            let got = figures.buyer_error_rate;
            checks.push(slo_check(
                "buyer_error_rate",
                got <= bound,
                Some(format!("{:.2}%", got * 100.0)),
                format!("<= {:.2}%", bound * 100.0),
            ));
        }
        if let Some(bound) = slo.p99_ms {
            let got = figures.p99_ms;
            checks.push(slo_check("p99_latency", got <= bound, Some(format!("{got:.1} ms")), format!("<= {bound} ms")));
        }
        if let Some(bound) = slo.catch_up_multiple {
            let got = figures.catch_up_multiple;
            checks.push(slo_check(
                "backlog_catch_up",
                got.is_some_and(|v| v >= bound),
                got.map(|v| format!("{v:.1}x")),
                format!(">= {bound}x"),
            ));
        }
        checks.push(self.took_effect());
        checks.push(self.back_at_end());
        Summary {
            figures,
            checks,
            affected_orders,
            products: self.products.clone(),
            schedule_hash: schedule_hash.to_string(),
            reason: None,
            variant,
        }
    }
}

impl Record {
    /// The drift outside the faults, and beside it the peak the faults' windows allowed, so
    /// that "0 units" next to a large drift peak says where that peak was.
    fn drift_outside_figure(&self) -> String {
        if self.drift_inside == 0 {
            return format!("{} units", self.drift_outside);
        }
        format!(
            "{} units (peak {} inside the fault windows and their {} s recovery allowance)",
            self.drift_outside,
            self.drift_inside,
            seconds(self.allowance())
        )
    }

    /// Whether `offset_ms` is inside no fault's window nor its recovery allowance: what a
    /// fault's effect is compared with.
    fn outside_every_window(&self, offset_ms: i64) -> bool {
        !self.in_fault_window(offset_ms)
    }

    /// What shows inside one window (`from`..=`to`, on the load's clock) that the run did not
    /// show outside every window; `None` when nothing did.
    fn effect_in(&self, from: i64, to: i64) -> Option<String> {
        let engines = self.plan.rig.engines;
        let inside = |at: i64| from <= at && at <= to;
        let ticks: Vec<&TickFigures> = self.ticks.iter().filter(|(at, _)| inside(*at)).map(|(_, t)| t).collect();
        if let Some(t) = ticks.iter().find(|t| t.db_path > 0) {
            return Some(format!("{} of {engines} engines on the DB path", t.db_path));
        }
        if let Some(t) = ticks.iter().find(|t| t.redis_path + t.db_path < engines) {
            return Some(format!("{} of {engines} engines unheard", engines - t.redis_path - t.db_path));
        }
        if let Some(t) = ticks.iter().filter(|t| t.drift_max_abs != 0).max_by_key(|t| t.drift_max_abs.abs()) {
            return Some(format!("drift {:+}", t.drift_max_abs));
        }
        // A load second covers [s, s + 1) on the load's clock.
        let second_inside = |s: u64| (s as i64 + 1) * 1000 > from && (s as i64) * 1000 <= to;
        let second_outside = |s: u64| {
            let (start, end) = (s as i64 * 1000, s as i64 * 1000 + 999);
            self.outside_every_window(start) && self.outside_every_window(end)
        };
        let (mut sent_in, mut errors_in, mut sent_out, mut errors_out) = (0, 0, 0, 0);
        let (mut p99_in, mut p99_out) = (Vec::new(), Vec::new());
        for &(s, sent, errors, p99) in &self.seconds {
            if second_inside(s) {
                (sent_in, errors_in) = (sent_in + sent, errors_in + errors);
                if sent > 0 {
                    p99_in.push(p99);
                }
            } else if second_outside(s) {
                (sent_out, errors_out) = (sent_out + sent, errors_out + errors);
                if sent > 0 {
                    p99_out.push(p99);
                }
            }
        }
        let share = |e: u64, n: u64| if n == 0 { 0.0 } else { e as f64 / n as f64 };
        let (share_in, share_out) = (share(errors_in, sent_in), share(errors_out, sent_out));
        if errors_in >= EFFECT_MIN_ERRORS && share_in >= EFFECT_MIN_ERROR_SHARE && share_in > 2.0 * share_out {
            return Some(format!(
                "{errors_in} buyer errors ({:.1}% of its requests, {:.1}% outside the faults)",
                100.0 * share_in,
                100.0 * share_out
            ));
        }
        if let (Some(p_in), Some(p_out)) = (median(&mut p99_in), median(&mut p99_out)) {
            if p_in >= 2.0 * p_out && p_in - p_out >= EFFECT_MIN_LATENCY_MS {
                return Some(format!("p99 {p_in:.0} ms (outside the faults {p_out:.0} ms)"));
            }
        }
        let backlog_in = ticks.iter().map(|t| t.backlog).max().unwrap_or(0);
        let backlog_out = self
            .ticks
            .iter()
            .filter(|(at, _)| self.outside_every_window(*at))
            .map(|(_, t)| t.backlog)
            .max()
            .unwrap_or(0);
        if backlog_in >= EFFECT_MIN_BACKLOG && backlog_in > 2 * backlog_out {
            return Some(format!("backlog {backlog_in} (outside the faults {backlog_out})"));
        }
        None
    }

    /// Each of the file's faults took effect inside its window (or within a few seconds of its
    /// end): an engine off the Redis path or unheard, drift, buyer errors, latency or a backlog
    /// the run did not show outside the faults, or what the fault itself did at once.
    fn took_effect(&self) -> Check {
        const BOUND: &str = "each fault: a mode change, errors, latency, drift or backlog inside its window";
        let fail = |figure: String| Check { passed: false, ..proof("fault_took_effect", figure, BOUND) };
        if self.drill_faults.is_empty() {
            return fail("no fault ran: the file has no [[faults]]".into());
        }
        let mut said = Vec::new();
        let mut all = true;
        for fault in &self.drill_faults {
            let window = self.windows.iter().find(|(f, _, _)| f == fault);
            let at_once = self.bit_at_once.iter().find(|(f, _)| f == fault).map(|(_, what)| what.clone());
            let effect = match window {
                None => None,
                Some((_, start, end)) => {
                    let to = end.unwrap_or(i64::MAX - EFFECT_GRACE_MS) + EFFECT_GRACE_MS;
                    at_once.or_else(|| self.effect_in(*start, to))
                }
            };
            match (window, effect) {
                (None, _) => {
                    all = false;
                    said.push(format!("{fault}: never injected"));
                }
                (Some(_), None) => {
                    all = false;
                    said.push(format!(
                        "{fault}: did not bite (no mode change, errors, latency, drift or backlog in its window)"
                    ));
                }
                (Some(_), Some(what)) => said.push(format!("{fault}: {what}")),
            }
        }
        let figure = said.join("; ");
        if all {
            proof("fault_took_effect", figure, BOUND)
        } else {
            fail(figure)
        }
    }

    /// The rig's engines were back at the end: every one heard from, and on the Redis path
    /// when the file leads the rig back, at one of the last [`END_TICKS`] ticks (one late
    /// heartbeat on a busy machine is not an engine gone; an engine that never came back is
    /// missing from all of them).
    fn back_at_end(&self) -> Check {
        let engines = self.plan.rig.engines;
        let lead_back = self.plan.guided_exit;
        let back_of = |t: &TickFigures| {
            if lead_back {
                if t.db_path == 0 {
                    t.redis_path
                } else {
                    0
                }
            } else {
                t.redis_path + t.db_path
            }
        };
        let last = self.ticks.iter().rev().take(END_TICKS).map(|(_, t)| t).max_by_key(|t| back_of(t));
        let (redis, db) = last.map_or((0, 0), |t| (t.redis_path, t.db_path));
        let back = last.is_some_and(|t| back_of(t) >= engines);
        let bound = if lead_back {
            format!("all {engines} on the Redis path")
        } else {
            format!("all {engines} heard from (the file does not lead them back)")
        };
        let unheard = engines.saturating_sub(redis + db);
        let figure = format!("{redis} on Redis, {db} on the DB path, {unheard} unheard at the end");
        Check { passed: back, ..proof("engines_back_at_end", figure, &bound) }
    }
}

/// The run's status once it ran to its end (not aborted, not halted), and why when it did
/// not pass: an invariant or SLO broken makes it `FAILED`; else a proof missing makes it
/// `INCONCLUSIVE`.
pub fn status_of(summary: &Summary) -> (RunStatus, Option<String>) {
    let failed: Vec<&Check> = summary.failed_checks().filter(|c| c.kind != PROOF).collect();
    let unproved: Vec<String> = summary.failed_checks().filter(|c| c.kind == PROOF).map(unproved_reason).collect();
    match (failed.is_empty(), unproved.is_empty()) {
        (true, true) => (RunStatus::Passed, None),
        (true, false) => (RunStatus::Inconclusive, Some(format!("inconclusive: {}", unproved.join("; ")))),
        (false, _) => {
            let names: Vec<&str> = failed.iter().map(|c| c.name.as_str()).collect();
            let mut reason = format!("failed: {}", names.join(", "));
            if !unproved.is_empty() {
                reason.push_str(&format!("; and inconclusive: {}", unproved.join("; ")));
            }
            (RunStatus::Failed, Some(reason))
        }
    }
}

/// Why a failed proof check leaves a run unproved, in a sentence.
fn unproved_reason(check: &Check) -> String {
    match check.name.as_str() {
        "engines_back_at_end" => format!("the rig's engines were not back at the end ({})", check.figure),
        _ if check.figure.starts_with("no fault ran") => "no fault ran (the file has no [[faults]])".into(),
        _ => format!("a fault did not take effect ({})", check.figure),
    }
}

/// The recovery allowance in ms: the file's recovery SLO when it declares one, as written
/// (the run's recovery is held to it whatever the short form: a drift allowance shorter than
/// the SLO would fail a run the SLO passes, and recovery does not shrink with the load, for
/// breaker probes, settling and the guided exit's rebuild take their own time: `redis-down`
/// at x0.3 took 8.4 s); else 10 s, scaled by the short form's factor, never below 5 s.
fn recovery_allowance_ms(recovery_s: Option<f64>, short: Option<f64>) -> i64 {
    match (recovery_s, short) {
        (Some(s), _) => (s * 1000.0) as i64,
        (None, Some(f)) if f < 1.0 => ((RECOVERY_ALLOWANCE_MS as f64 * f) as i64).max(MIN_RECOVERY_ALLOWANCE_MS),
        (None, _) => RECOVERY_ALLOWANCE_MS,
    }
}

/// Milliseconds as seconds the way a report says them: `10`, `4.5`.
fn seconds(ms: i64) -> String {
    let text = format!("{:.1}", ms as f64 / 1000.0);
    text.strip_suffix(".0").map(str::to_string).unwrap_or(text)
}

fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    Some(values[values.len() / 2])
}

fn proof(name: &str, figure: String, bound: &str) -> Check {
    Check { name: name.into(), kind: PROOF.into(), passed: true, figure, bound: bound.into() }
}

/// Whether a run sent enough of its schedule to be judged passed.
fn sent_enough(sent: u64, planned: u64) -> bool {
    planned == 0 || sent as f64 >= planned as f64 * SENT_SHARE_TO_PASS
}

fn sent_figure(sent: u64, planned: u64) -> String {
    let share = if planned == 0 { 100.0 } else { 100.0 * sent as f64 / planned as f64 };
    format!("{sent} of {planned} sent ({share:.0}%)")
}

fn invariant(name: &str, passed: bool, figure: String, bound: &str) -> Check {
    Check { name: name.into(), kind: "invariant".into(), passed, figure, bound: bound.into() }
}

fn slo_check(name: &str, passed: bool, figure: Option<String>, bound: String) -> Check {
    Check {
        name: name.into(),
        kind: "slo".into(),
        passed,
        figure: figure.unwrap_or_else(|| "not reached".into()),
        bound,
    }
}

/// The buyers' record against the DB.
#[derive(Debug, Default)]
pub struct OrderCheck {
    pub lost: u64,
    /// The lost orders themselves: their buyers were told "accepted" and have nothing.
    pub lost_orders: Vec<AffectedOrder>,
    pub duplicated: u64,
    pub failed_back: u64,
    pub unannounced: u64,
}

/// Every accepted order is, by `within` from now, an order row or a recorded failure; no
/// order number was announced twice and no buyer holds two orders of one product (each asks
/// once). Orders whose buyer heard an error (the reply was lost with the connection) are
/// counted apart: their outcome was unknown to the buyer, which an idempotent retry resolves.
pub async fn check_orders(
    conns: &Connections,
    answers: &[Sent],
    first_user: u64,
    buyers: u64,
    within: Duration,
) -> Result<OrderCheck, RunnerError> {
    let accepted: Vec<&str> =
        answers.iter().filter(|a| a.status == 202).filter_map(|a| a.order_no.as_deref()).collect();
    let unique: HashSet<&str> = accepted.iter().copied().collect();
    let unique: Vec<&str> = unique.into_iter().collect();
    let (in_orders, in_failures) = outcomes_of(&conns.mysql, &unique, within).await?;
    let missing = |n: &str| !in_orders.contains(n) && !in_failures.contains(n);
    let lost = unique.iter().filter(|n| missing(n)).count() as u64;
    let lost_orders = answers
        .iter()
        .filter(|a| a.status == 202)
        .filter_map(|a| a.order_no.as_deref().filter(|n| missing(n)).map(|n| (n, a)))
        .map(|(order_no, a)| AffectedOrder {
            order_no: order_no.to_string(),
            product_id: a.product_id,
            user_id: a.user_id,
            buy_count: 1, // the load asks for one unit at a time
            why: "LOST".into(),
        })
        .collect();
    let (last_user, users) = (first_user + buyers.max(1) - 1, "user_id BETWEEN ? AND ?");
    let rows: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM orders WHERE {users}"))
        .bind(first_user)
        .bind(last_user)
        .fetch_one(&conns.mysql)
        .await?;
    let twice: i64 = sqlx::query_scalar(&format!(
        "SELECT CAST(COALESCE(SUM(n - 1), 0) AS SIGNED) FROM \
         (SELECT COUNT(*) AS n FROM orders WHERE {users} GROUP BY user_id, product_id HAVING n > 1) AS t"
    ))
    .bind(first_user)
    .bind(last_user)
    .fetch_one(&conns.mysql)
    .await?;
    let duplicated = (accepted.len() - unique.len()) as u64 + twice as u64;
    let unannounced = (rows as u64).saturating_sub(in_orders.len() as u64).saturating_sub(twice as u64);
    Ok(OrderCheck { lost, lost_orders, duplicated, failed_back: in_failures.len() as u64, unannounced })
}

/// What the guided exit did, and how long its resume took to reach every engine.
pub struct LedBack {
    pub outcome: String,
    pub propagation_ms: Option<u64>,
}

/// When any rig engine left the Redis path, leads the rig back with the guided exit of its
/// switch row once their breakers see Redis healthy; `None` when every engine stayed on Redis.
pub async fn lead_back(conns: Connections, run_id: u64, instances: Vec<String>) -> Option<LedBack> {
    // Only engines heard from lately count: a stale heartbeat shows a mode that may be over.
    let live_rows = |rows: Vec<(String, String, String, i64)>| {
        rows.into_iter()
            .filter(|(id, _, _, age_us)| instances.contains(id) && *age_us <= 3_000_000)
            .map(|(_, mode, breaker, _)| (mode, breaker))
            .collect::<Vec<_>>()
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let rows: Vec<(String, String, String, i64)> = sqlx::query_as(
            "SELECT instance_id, CAST(effective_mode AS CHAR), CAST(breaker_state AS CHAR), \
                    CAST(TIMESTAMPDIFF(MICROSECOND, last_seen, NOW(3)) AS SIGNED) FROM engine_heartbeats",
        )
        .fetch_all(&conns.mysql)
        .await
        .ok()?;
        let live = live_rows(rows);
        if !live.is_empty() && live.iter().all(|(mode, breaker)| mode == "NORMAL" && breaker == "CLOSED") {
            return None;
        }
        // The exit waits for every breaker to see Redis healthy again (HALF_OPEN).
        let healthy = live.iter().all(|(_, breaker)| breaker != "OPEN");
        if (healthy && live.len() == instances.len()) || tokio::time::Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // The rig's row only: the sale beside the drill is neither paused nor rebuilt.
    let opts = ExitOptions::new(Scope::Rig(run_id), "drill: the faults are over, back to Redis");
    match switch::guided_exit(&conns, &opts, &|_| {}).await {
        Ok(report) => Some(LedBack {
            outcome: format!(
                "{} products rebuilt, sales paused {} ms, {} instances not back on Redis",
                report.rewrites.len(),
                report.paused_ms,
                report.not_back_on_redis.len()
            ),
            propagation_ms: report.resume.propagation_ms.map(|ms| ms.max(0) as u64),
        }),
        Err(e) => Some(LedBack { outcome: format!("failed: {e}"), propagation_ms: None }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_sent_less_than_nine_tenths_of_its_schedule_is_not_enough() {
        assert!(sent_enough(1_440, 1_600));
        assert!(!sent_enough(1_439, 1_600));
        assert!(!sent_enough(1_023, 1_600), "the newcomer's run: 577 of 1,600 never sent");
        assert_eq!(sent_figure(1_023, 1_600), "1023 of 1600 sent (64%)");
    }

    #[test]
    fn the_recovery_allowance_scales_with_the_short_form_down_to_five_seconds() {
        assert_eq!(recovery_allowance_ms(None, None), 10_000);
        assert_eq!(recovery_allowance_ms(None, Some(0.75)), 7_500);
        assert_eq!(recovery_allowance_ms(None, Some(0.3)), 5_000, "3 s is below the floor");
        assert_eq!(recovery_allowance_ms(Some(15.0), None), 15_000);
        assert_eq!(recovery_allowance_ms(Some(15.0), Some(0.3)), 15_000, "the SLO the run is held to");
        assert_eq!(seconds(4_500), "4.5");
        assert_eq!(seconds(10_000), "10");
    }

    /// A redis-down record with its fault from 4 s to 12 s; every second sends 100 requests at
    /// `p99` ms (the window's at `p99_in`), and every engine stays on Redis.
    fn record_with(p99: f64, p99_in: f64) -> Record {
        let (plan, _) = Plan::builtin("redis-down").unwrap();
        let fault = plan.faults[0].name.clone();
        let engines = plan.rig.engines;
        let mut rec = Record::new(&plan, None, vec![1], vec![fault.clone()]);
        rec.saw(&Event::FaultInjected { fault: fault.clone(), target: "redis".into(), action: "down".into() }, 4_000);
        rec.saw(&Event::FaultRestored { fault }, 12_000);
        for s in 0..40u64 {
            let inside = (4..12).contains(&s);
            let second = LoadSecond { sent: 100, p99_ms: if inside { p99_in } else { p99 }, ..LoadSecond::default() };
            rec.second(s, &second);
            let tick = TickFigures { redis_path: engines, redis_reachable: true, ..TickFigures::default() };
            rec.tick(&tick, 0, s as i64 * 1000 + 500);
        }
        rec
    }

    #[test]
    fn a_fault_that_showed_nothing_in_its_window_did_not_take_effect() {
        let check = record_with(12.0, 13.0).took_effect();
        assert!(!check.passed && check.figure.contains("did not bite"), "{check:?}");
        assert!(record_with(12.0, 13.0).back_at_end().passed);
    }

    #[test]
    fn a_fault_whose_window_was_slow_took_effect() {
        let check = record_with(12.0, 310.0).took_effect();
        assert!(check.passed && check.figure.contains("p99 310 ms"), "{check:?}");
    }

    #[test]
    fn a_run_that_broke_nothing_but_proved_nothing_is_inconclusive_and_one_that_broke_something_failed() {
        let check = |name: &str, kind: &str, passed: bool| Check {
            name: name.into(),
            kind: kind.into(),
            passed,
            figure: "x".into(),
            bound: "y".into(),
        };
        let mut summary = Summary {
            checks: vec![check("oversell", "invariant", true), check("engines_back_at_end", PROOF, false)],
            ..Summary::default()
        };
        let (status, reason) = status_of(&summary);
        assert_eq!(status, RunStatus::Inconclusive);
        assert!(reason.unwrap().contains("the rig's engines were not back at the end"));
        summary.checks[0].passed = false;
        let (status, reason) = status_of(&summary);
        assert_eq!(status, RunStatus::Failed);
        assert!(reason.unwrap().starts_with("failed: oversell; and inconclusive:"));
        summary.checks[1].passed = true;
        summary.checks[0].passed = true;
        assert_eq!(status_of(&summary), (RunStatus::Passed, None));
    }

    #[test]
    fn an_empty_schedule_has_nothing_left_unsent() {
        assert!(sent_enough(0, 0));
    }
}
