// The run panel of the Drills screen: one run at one moment (the latest while it goes, the
// replay's cursor otherwise): its phase, the faults on, the engines' mode, the last second of
// load and the last tick, the invariants green or red, the notable events so far, and four
// charts of the whole timeline with the fault windows shaded and the moment marked.
import { t, wordOf, currentLanguage } from "../../i18n.js";
import { byId } from "../../dom.js";
import { momentAt } from "./moment.js";
import { lineChart } from "./charts.js";

/** @typedef {import("../../types").RunDetail} RunDetail */
/** @typedef {import("../../types").TimedEvent} TimedEvent */
/** @typedef {import("../../types").DrillInfo} DrillInfo */
/** @typedef {import("../../types").TimelineCharts} TimelineCharts */
/** @typedef {import("../../types").FaultWindow} FaultWindow */

/** The invariants the runner checks every tick (its Violation events name them). */
const TICK_INVARIANTS = ["oversell", "redis_stock_negative", "drift_outside_faults"];

/**
 * The phases the runner names, and below the invariants, by their keys of the catalogue (the
 * runner records them as text: one a newer runner names is shown as named).
 * @type {Record<string, import("../../i18n.js").MessageKey>}
 */
const PHASES = { rig: "phase_rig", load: "phase_load", drain: "phase_drain", verify: "phase_verify", done: "phase_done" };
/** @type {Record<string, import("../../i18n.js").MessageKey>} */
const INVARIANTS = {
  oversell: "inv_oversell",
  redis_stock_negative: "inv_redis_stock_negative",
  drift_outside_faults: "inv_drift_outside_faults",
  redis_stock_never_negative: "inv_redis_stock_never_negative",
  no_accepted_order_lost: "inv_no_accepted_order_lost",
  no_duplicate_order: "inv_no_duplicate_order",
  no_drift_outside_faults: "inv_no_drift_outside_faults",
  drift_zero_at_end: "inv_drift_zero_at_end",
  load_sent_as_planned: "inv_load_sent_as_planned",
  no_stale_rewrite: "inv_no_stale_rewrite",
  accepted_orders_always_found: "inv_accepted_orders_always_found",
  atEnd: "inv_atEnd",
};

/**
 * Why the run ended as it did, in the window's language: built from the run's status and its
 * failed checks (the runner's English sentence is the record, kept for the report and the
 * CLI). What only the record says (an abort's cause, a halt's reason as typed) follows it.
 * @param {RunDetail} run
 */
function verdictOf(run) {
  const summary = run.summary;
  if (!summary) return "";
  const failed = summary.checks.filter((c) => !c.passed);
  const checkName = (/** @type {string} */ name) => wordOf(INVARIANTS, name);
  const recorded = (summary.reason ?? "").replace(/^halted: /, "");
  switch (statusOf(run)) {
    case "PASSED":
      return t("verdictPassed");
    case "FAILED":
      return t("verdictFailed", { checks: failed.map((c) => checkName(c.name)).join(currentLanguage() === "zh" ? "、" : ", ") });
    case "HALTED":
      return t("verdictHalted", { reason: recorded });
    default:
      return recorded ? t("verdictEnded", { reason: recorded }) : "";
  }
}

/** @param {RunDetail} run */
export function statusOf(run) {
  return run.dead ? "DEAD" : run.status;
}

/**
 * The drill's title in the window's language, else its name.
 * @param {string} scenario
 * @param {DrillInfo[]} drills
 */
export function titleOf(scenario, drills) {
  const d = drills.find((x) => x.name === scenario);
  if (!d) return scenario;
  return currentLanguage() === "zh" ? d.title_zh : d.title_en;
}

/**
 * A fault's name in the window's language: the run's drill file's Chinese name, else the
 * built-in drill's, else its name as the timeline records it.
 * @param {string} scenario
 * @param {FaultWindow} fault
 * @param {DrillInfo[]} drills
 */
function faultNameOf(scenario, fault, drills) {
  if (currentLanguage() !== "zh") return fault.fault;
  if (fault.fault_zh) return fault.fault_zh;
  const d = drills.find((x) => x.name === scenario);
  const i = d ? d.faults.indexOf(fault.fault) : -1;
  return d && i >= 0 ? d.faults_zh[i] : fault.fault;
}

/**
 * @param {string} label
 * @param {string} value
 * @param {string} key
 */
function entry(label, value, key) {
  const dt = document.createElement("dt");
  dt.textContent = label;
  const dd = document.createElement("dd");
  dd.textContent = value;
  dd.dataset.state = key;
  return [dt, dd];
}

/** @param {number} ms */
export function clock(ms) {
  const s = ms / 1000;
  return `${s < 0 ? "-" : ""}${Math.abs(s).toFixed(1)} s`;
}

/** @param {TimedEvent} e */
function describe(e) {
  switch (e.kind) {
    case "phase":
      return t("ev_phase", { phase: wordOf(PHASES, e.phase) });
    case "fault_injected":
    case "fault_restored":
      return t(`ev_${e.kind}`, { fault: e.fault });
    case "mode":
      return t("ev_mode", { redis: e.redis_path, db: e.db_path, unknown: e.unknown });
    case "repair":
      return t("ev_repair", { what: e.what, outcome: e.outcome });
    case "violation":
      return t("ev_violation", { invariant: wordOf(INVARIANTS, e.invariant), figure: e.figure });
    case "abort":
    case "halt":
      return t(`ev_${e.kind}`, { reason: e.reason });
    case "note":
      return t("ev_note", { text: e.text });
    default:
      return e.kind;
  }
}

/**
 * @param {string} name
 * @param {boolean | null} passed null: not decided yet
 * @param {string} detail
 */
function invariant(name, passed, detail) {
  const li = document.createElement("li");
  li.dataset.invariant = name;
  li.className = passed === null ? "pending" : passed ? "ok" : "broken";
  li.textContent = `${passed === null ? "…" : passed ? "✓" : "✗"} ${wordOf(INVARIANTS, name)}${detail ? ` (${detail})` : ""}`;
  return li;
}

/**
 * Draws `run` at `at` ms into the run panel; `charts` are the core's of the whole timeline.
 * @param {{ run: RunDetail, timeline: TimedEvent[], charts: TimelineCharts, at: number, replay: boolean, drills: DrillInfo[] }} shown
 */
export function render({ run, timeline, charts, at, replay, drills }) {
  byId("drill-view").hidden = false;
  const title = titleOf(run.scenario, drills);
  byId("drill-view-title").textContent = t(replay ? "viewReplay" : "viewLive", { id: run.id, title });
  const status = byId("drill-view-status");
  status.textContent =
    t(statusOf(run)) +
    (!replay && run.status === "RUNNING" && run.heartbeat_age_s !== null
      ? ` · ${t("heartbeat", { s: run.heartbeat_age_s.toFixed(1) })}`
      : "");
  status.className = `run-status status-${statusOf(run)}`;
  status.dataset.status = statusOf(run);

  const m = momentAt(timeline, charts.fault_windows, at);
  const load = m.load;
  const tick = m.tick;
  const errors = load ? Object.values(load.errors).reduce((a, b) => a + (b ?? 0), 0) : 0;
  // The verdict belongs to the end: live, or the replay's cursor past the last event.
  const ended = !replay || at >= (timeline[timeline.length - 1]?.offset_ms ?? 0);
  const verdict = ended ? verdictOf(run) : "";
  byId("drill-state").replaceChildren(
    ...entry(t("st_phase"), m.phase ? wordOf(PHASES, m.phase) : "-", "phase"),
    ...entry(
      t("st_faults"),
      m.faults.length ? m.faults.map((f) => faultNameOf(run.scenario, f, drills)).join("; ") : t("none"),
      "faults",
    ),
    ...entry(t("st_mode"), m.mode ? `${m.mode.redis_path} / ${m.mode.db_path}` : "-", "mode"),
    ...entry(
      t("st_load"),
      load ? t("st_loadLine", { sent: load.sent, accepted: load.accepted, errors, p99: load.p99_ms.toFixed(0) }) : "-",
      "load",
    ),
    ...entry(t("st_drift"), tick ? `${tick.drift} (${tick.drift_max_abs})` : "-", "drift"),
    ...entry(t("st_backlog"), tick ? `${tick.backlog} / ${tick.inflight}` : "-", "backlog"),
    ...entry(t("st_oversold"), tick ? String(tick.oversold_units) : "-", "oversold"),
    ...entry(t("st_stock"), tick ? `${tick.redis_stock} / ${tick.db_stock}` : "-", "stock"),
    ...(verdict ? entry(t("st_verdict"), verdict, "verdict") : []),
  );

  // While it goes (or under the replay's cursor): the tick invariants, red from their first
  // violation. At the end of a run that finished: every invariant its verdict checked.
  const finalChecks = ended && run.summary ? run.summary.checks.filter((c) => c.kind === "invariant") : [];
  const invariants = finalChecks.length
    ? finalChecks.map((c) => invariant(c.name, c.passed, c.passed ? "" : c.figure))
    : [
        ...TICK_INVARIANTS.map((name) => {
          const broken = m.violations.find((v) => v.invariant === name);
          return invariant(name, !broken, broken ? `${broken.figure} @ ${clock(broken.offset_ms)}` : "");
        }),
        invariant("atEnd", null, ""),
      ];
  byId("drill-invariants").replaceChildren(...invariants);

  byId("drill-log").replaceChildren(
    ...m.log.slice(-14).map((e) => {
      const li = document.createElement("li");
      li.dataset.kind = e.kind;
      li.textContent = `${clock(e.offset_ms)}  ${describe(e)}`;
      return li;
    }),
  );

  const s = charts.series;
  const windows = charts.fault_windows.map((w) => /** @type {[number, number]} */ ([w.start_s, w.end_s]));
  const cursor = replay ? at / 1000 : null;
  const chart = (/** @type {string} */ title, /** @type {import("./charts.js").Line[]} */ lines) =>
    lineChart({ title, lines, span: charts.span_s, windows, cursor });
  byId("drill-charts").replaceChildren(
    chart(t("chartLoad"), [
      { label: t("s_accepted"), color: "#2e7d32", points: s.load.map((p) => [p.at_s, p.accepted]) },
      { label: t("s_errors"), color: "#c62828", points: s.load.map((p) => [p.at_s, p.errors]) },
    ]),
    chart(t("chartDrift"), [
      { label: t("s_drift"), color: "#6a1b9a", points: s.ticks.map((p) => [p.at_s, p.drift]) },
      { label: t("s_worst"), color: "#ef6c00", points: s.ticks.map((p) => [p.at_s, p.drift_max_abs]) },
    ]),
    chart(t("chartBacklog"), [
      { label: t("s_backlog"), color: "#1565c0", points: s.ticks.map((p) => [p.at_s, p.backlog]) },
      { label: t("s_inflight"), color: "#00897b", points: s.ticks.map((p) => [p.at_s, p.inflight]) },
    ]),
    chart(t("chartEngines"), [
      { label: t("s_redis"), color: "#c62828", points: charts.redis_path },
      { label: t("s_db"), color: "#1565c0", points: charts.db_path },
    ]),
  );
}
