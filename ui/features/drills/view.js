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
/**
 * The checks a verdict names (its invariants, then its drill file's SLOs), and the invariants
 * the runner's Violation events name.
 * @type {Record<string, import("../../i18n.js").MessageKey>}
 */
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
  fault_took_effect: "inv_fault_took_effect",
  engines_back_at_end: "inv_engines_back_at_end",
  no_stale_rewrite: "inv_no_stale_rewrite",
  accepted_orders_always_found: "inv_accepted_orders_always_found",
  failover_drift_confirmed: "inv_failover_drift_confirmed",
  atEnd: "inv_atEnd",
  time_to_db_path: "slo_time_to_db_path",
  recovery_time: "slo_recovery_time",
  buyer_error_rate: "slo_buyer_error_rate",
  p99_latency: "slo_p99_latency",
  backlog_catch_up: "slo_backlog_catch_up",
};

/**
 * What the runner's Repair events say it did (`drill::runner`); its outcome is its own
 * sentence, shown as recorded.
 * @type {Record<string, import("../../i18n.js").MessageKey>}
 */
const REPAIRS = { "fenced rewrite": "rp_fenced_rewrite", "guided exit to Redis": "rp_guided_exit", failover: "rp_failover" };

/** @typedef {string | Node} Said */

/**
 * The runner's own words as recorded (a violation's figure, a repair's outcome, an abort's
 * cause, a note): English, not ours to translate, so marked as such, as an error's verbatim
 * detail is (feedback.js).
 * @param {string} text
 */
function recorded(text) {
  const span = document.createElement("span");
  span.className = "detail";
  span.lang = "en";
  span.textContent = text;
  return span;
}

/**
 * What a person typed (a halt's reason), as typed.
 * @param {string} text
 */
function typed(text) {
  const span = document.createElement("span");
  span.dataset.userText = "";
  span.textContent = text;
  return span;
}

/**
 * A sentence of the catalogue whose slots in `nodes` hold recorded or typed words, each kept
 * in its own node.
 * @param {import("../../i18n.js").MessageKey} key
 * @param {Record<string, string | number>} vars
 * @param {Record<string, Node>} nodes
 * @returns {Said[]}
 */
function sentence(key, vars, nodes) {
  const names = Object.keys(nodes);
  const marks = Object.fromEntries(names.map((name, i) => [name, `\u0000${i}\u0000`]));
  return t(key, { ...vars, ...marks })
    .split(/\u0000(\d+)\u0000/)
    .map((part, i) => (i % 2 ? nodes[names[Number(part)]] : part))
    .filter((part) => part !== "");
}

/**
 * Why the run ended as it did, in the window's language: built from the run's status and its
 * failed checks (the runner's English sentence is the record, kept for the report and the
 * CLI). What only the record says (an abort's cause, a halt's reason as typed) follows it,
 * marked as such. Empty while the run has no summary.
 * @param {RunDetail} run
 * @returns {Said[]}
 */
function verdictOf(run) {
  const summary = run.summary;
  if (!summary) return [];
  const failed = summary.checks.filter((c) => !c.passed);
  const checkName = (/** @type {string} */ name) => wordOf(INVARIANTS, name);
  const reason = (summary.reason ?? "").replace(/^halted: /, "");
  switch (statusOf(run)) {
    case "PASSED":
      return [t("verdictPassed")];
    case "FAILED":
      return [t("verdictFailed", { checks: failed.map((c) => checkName(c.name)).join(currentLanguage() === "zh" ? "、" : ", ") })];
    case "HALTED":
      return sentence("verdictHalted", {}, { reason: typed(reason) });
    case "INCONCLUSIVE":
      return [t("verdictInconclusive", { checks: failed.map((c) => checkName(c.name)).join(currentLanguage() === "zh" ? "、" : ", ") })];
    default:
      return reason ? sentence("verdictEnded", {}, { reason: recorded(reason) }) : [];
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
 * A fault's name in the window's language: the run's drill file's Chinese name (its window's),
 * else the built-in drill's, else its name as the timeline records it.
 * @param {string} fault its name as recorded
 * @param {Run} run
 */
function faultNameOf(fault, { scenario, windows, drills }) {
  if (currentLanguage() !== "zh") return fault;
  const zh = windows.find((w) => w.fault === fault && w.fault_zh)?.fault_zh;
  if (zh) return zh;
  const d = drills.find((x) => x.name === scenario);
  const i = d ? d.faults.indexOf(fault) : -1;
  return d && i >= 0 ? d.faults_zh[i] : fault;
}

/**
 * What a fault's or event's name needs to be said: the run's drill, its fault windows (the
 * core's) and the built-in drills.
 * @typedef {{ scenario: string, windows: FaultWindow[], drills: DrillInfo[] }} Run
 */

/**
 * @param {string} label
 * @param {string | Said[]} value
 * @param {string} key
 */
function entry(label, value, key) {
  const dt = document.createElement("dt");
  dt.textContent = label;
  const dd = document.createElement("dd");
  dd.append(...(typeof value === "string" ? [value] : value));
  dd.dataset.state = key;
  return [dt, dd];
}

/** @param {number} ms */
export function clock(ms) {
  const s = ms / 1000;
  return t("seconds", { n: `${s < 0 ? "-" : ""}${Math.abs(s).toFixed(1)}` });
}

/**
 * A timeline event in the window's language; the runner's own words and a person's as
 * recorded, marked.
 * @param {TimedEvent} e
 * @param {Run} run
 * @returns {Said[]}
 */
function describe(e, run) {
  switch (e.kind) {
    case "phase":
      return [t("ev_phase", { phase: wordOf(PHASES, e.phase) })];
    case "fault_injected":
    case "fault_restored":
      return [t(`ev_${e.kind}`, { fault: faultNameOf(e.fault, run) })];
    case "mode":
      return [t("ev_mode", { redis: e.redis_path, db: e.db_path, unknown: e.unknown })];
    case "repair":
      return sentence("ev_repair", { what: wordOf(REPAIRS, e.what) }, { outcome: recorded(e.outcome) });
    case "violation":
      return sentence("ev_violation", { invariant: wordOf(INVARIANTS, e.invariant) }, { figure: recorded(e.figure) });
    case "abort":
      return sentence("ev_abort", {}, { reason: recorded(e.reason) });
    case "halt":
      return sentence("ev_halt", {}, { reason: typed(e.reason) });
    case "note":
      return sentence("ev_note", {}, { text: recorded(e.text) });
    default:
      return [e.kind];
  }
}

/**
 * @param {string} name
 * @param {boolean | null} passed null: not decided yet
 * @param {Said[]} detail the runner's figure (and when), as recorded
 */
function invariant(name, passed, detail) {
  const li = document.createElement("li");
  li.dataset.invariant = name;
  li.className = passed === null ? "pending" : passed ? "ok" : "broken";
  li.append(`${passed === null ? "…" : passed ? "✓" : "✗"} ${wordOf(INVARIANTS, name)}`);
  if (detail.length) li.append(" (", ...detail, ")");
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
  const verdict = ended ? verdictOf(run) : [];
  /** @type {Run} */
  const about = { scenario: run.scenario, windows: charts.fault_windows, drills };
  byId("drill-state").replaceChildren(
    ...entry(t("st_phase"), m.phase ? wordOf(PHASES, m.phase) : "-", "phase"),
    ...entry(
      t("st_faults"),
      m.faults.length ? m.faults.map((f) => faultNameOf(f.fault, about)).join("; ") : t("none"),
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
    ...(verdict.length ? entry(t("st_verdict"), verdict, "verdict") : []),
  );

  // While it goes (or under the replay's cursor): the tick invariants, red from their first
  // violation. At the end of a run that finished: every invariant its verdict checked.
  const finalChecks = ended && run.summary ? run.summary.checks.filter((c) => c.kind === "invariant" || c.kind === "proof") : [];
  const invariants = finalChecks.length
    ? finalChecks.map((c) => invariant(c.name, c.passed, c.passed ? [] : [recorded(c.figure)]))
    : [
        ...TICK_INVARIANTS.map((name) => {
          const broken = m.violations.find((v) => v.invariant === name);
          return invariant(name, !broken, broken ? [recorded(broken.figure), ` @ ${clock(broken.offset_ms)}`] : []);
        }),
        invariant("atEnd", null, []),
      ];
  byId("drill-invariants").replaceChildren(...invariants);

  byId("drill-log").replaceChildren(
    ...m.log.slice(-14).map((e) => {
      const li = document.createElement("li");
      li.dataset.kind = e.kind;
      li.append(`${clock(e.offset_ms)}  `, ...describe(e, about));
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
