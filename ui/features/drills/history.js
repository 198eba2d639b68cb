// The sale's drill runs, newest first: each with its status (a running one whose runner
// stopped beating shows DEAD), its report (the core's HTML, in the window's language), and
// two of them compared figure by figure with the regressions marked.
import { invoke } from "../../api.js";
import { t, said, wordOf, currentLanguage } from "../../i18n.js";
import { showError, clearFeedback, cell } from "../../feedback.js";
import { invalid } from "../../messages.js";
import { byId, query } from "../../dom.js";

/** @typedef {import("../../types").RunRecord} RunRecord */
/** @typedef {import("../../types").Comparison} Comparison */

const tbody = query("#drill-history tbody");
/** Runs ticked for the comparison. @type {Set<number>} */
const ticked = new Set();
/** @type {RunRecord[]} */
let runs = [];
/** @type {Comparison | null} */
let compared = null;
/** The run whose report is open. @type {number | null} */
let reportRun = null;

/** @typedef {{ replay: (id: number) => void, watch: (id: number) => void }} Actions */
/** @type {Actions} */
let actions;

/**
 * The figures a comparison compares (drills/compare.rs `FIGURES`), by their names in the
 * summary; one a newer core compares is shown as named. The name stays on the row
 * (`data-figure`).
 * @type {Record<string, import("../../i18n.js").MessageKey>}
 */
const FIGURES = {
  oversold_units: "fig_oversold_units", lost: "fig_lost", duplicated: "fig_duplicated",
  buyer_error_rate: "fig_buyer_error_rate", p99_ms: "fig_p99_ms", time_to_db_path_ms: "fig_time_to_db_path_ms",
  recovery_s: "fig_recovery_s", drift_peak: "fig_drift_peak", switch_propagation_ms: "fig_switch_propagation_ms",
};

/** @param {string | null} at */
const when = (at) => (at ? at.replace("T", " ").slice(0, 19) : null);

/**
 * @param {string} label
 * @param {string} className
 * @param {() => void} onClick
 */
function button(label, className, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = className;
  b.textContent = label;
  b.addEventListener("click", onClick);
  return b;
}

/** @param {RunRecord} r */
function row(r) {
  const status = r.dead ? "DEAD" : r.status;
  const tr = document.createElement("tr");
  tr.dataset.runId = String(r.id);
  tr.className = `run status-${status}`;
  const pick = document.createElement("td");
  const box = document.createElement("input");
  box.type = "checkbox";
  box.className = "pick";
  box.checked = ticked.has(r.id);
  box.addEventListener("change", () => (box.checked ? ticked.add(r.id) : ticked.delete(r.id)));
  pick.append(box);
  const statusCell = cell(t(status), "status");
  statusCell.dataset.status = status;
  const buttons = document.createElement("td");
  buttons.className = "actions";
  buttons.append(
    button(t("drillReport"), "report", () => openReport(r.id)),
    button(t("drillReplay"), "replay", () => actions.replay(r.id)),
  );
  if (r.status === "RUNNING") buttons.append(button(t("drillWatch"), "watch", () => actions.watch(r.id)));
  tr.append(
    pick,
    cell(r.id, "num id"),
    cell(r.scenario, "scenario"),
    statusCell,
    cell(when(r.started_at)),
    cell(when(r.finished_at)),
    cell(r.started_by),
    cell(r.halt_reason, "why"),
    buttons,
  );
  return tr;
}

export async function refresh() {
  try {
    runs = await invoke("drill_runs", { limit: 50 });
    tbody.replaceChildren(...runs.map(row));
  } catch (err) {
    showError(err);
  }
}

/** @param {number} runId */
async function openReport(runId) {
  clearFeedback();
  try {
    const html = await invoke("drill_report", { run_id: runId, lang: currentLanguage() });
    reportRun = runId;
    byId("drill-report-title").textContent = t("reportOf", { id: runId });
    /** @type {HTMLIFrameElement} */ (byId("drill-report")).srcdoc = html;
    byId("drill-report-panel").hidden = false;
    byId("drill-report-panel").scrollIntoView({ block: "start" });
  } catch (err) {
    showError(err);
  }
}

function closeReport() {
  reportRun = null;
  byId("drill-report-panel").hidden = true;
  /** @type {HTMLIFrameElement} */ (byId("drill-report")).srcdoc = "";
}

/** @param {number | null} v */
function number(v) {
  if (v === null) return "-";
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) < 1 ? v.toFixed(4) : v.toFixed(1);
}

function renderComparison() {
  const box = byId("drill-compare");
  if (!compared) {
    box.hidden = true;
    return box.replaceChildren();
  }
  const c = compared;
  const yesNo = (/** @type {boolean} */ v) => t(v ? "yes" : "no");
  const head = document.createElement("p");
  head.className = "compare-head";
  head.textContent = t("compareHead", {
    a: c.a.id, sa: said(c.a.status), b: c.b.id, sb: said(c.b.status),
    plan: yesNo(c.same_plan), schedule: yesNo(c.same_schedule), threshold: Math.round(c.threshold * 100),
  });
  const table = document.createElement("table");
  table.id = "drill-compare-table";
  const thead = document.createElement("thead");
  const hr = document.createElement("tr");
  for (const h of [t("figure"), `A #${c.a.id}`, `B #${c.b.id}`, t("change"), ""]) {
    const th = document.createElement("th");
    th.textContent = h;
    hr.append(th);
  }
  thead.append(hr);
  const body = document.createElement("tbody");
  for (const r of c.rows) {
    const tr = document.createElement("tr");
    tr.dataset.figure = r.figure;
    tr.className = r.regressed ? "regressed" : "";
    const change = r.change !== null ? `${r.change >= 0 ? "+" : ""}${(r.change * 100).toFixed(1)}%` : r.diff ? `${r.diff > 0 ? "+" : ""}${number(r.diff)}` : "-";
    tr.append(cell(wordOf(FIGURES, r.figure), "figure"), cell(number(r.a), "num"), cell(number(r.b), "num"), cell(change, "num change"), cell(r.regressed ? t("regressed") : "", "flag"));
    body.append(tr);
  }
  table.append(thead, body);
  const verdict = document.createElement("p");
  verdict.id = "drill-compare-verdict";
  verdict.className = c.regressions.length ? "regressions" : "no-regression";
  verdict.textContent = c.regressions.length ? t("regressions", { n: c.regressions.length, list: c.regressions.map((f) => wordOf(FIGURES, f)).join(t("listSep")) }) : t("noRegression");
  box.replaceChildren(head, table, verdict);
  box.hidden = false;
}

async function compare() {
  clearFeedback();
  if (ticked.size !== 2) return showError(invalid("pickTwo"));
  // In the order ticked: the first is the baseline.
  const [a, b] = [...ticked];
  const threshold = Number(/** @type {HTMLInputElement} */ (byId("drill-threshold")).value) / 100;
  try {
    compared = await invoke("drill_compare", { a, b, threshold });
    renderComparison();
  } catch (err) {
    showError(err);
  }
}

/** @param {Actions} given */
export function init(given) {
  actions = given;
  byId("drill-refresh").addEventListener("click", refresh);
  byId("drill-compare-go").addEventListener("click", compare);
  byId("drill-report-close").addEventListener("click", closeReport);
}

/** Redraws in the new language; an open report is rendered again in it. */
export function relabel() {
  tbody.replaceChildren(...runs.map(row));
  renderComparison();
  if (reportRun !== null) openReport(reportRun);
}

export function reset() {
  runs = [];
  ticked.clear();
  compared = null;
  tbody.replaceChildren();
  renderComparison();
  closeReport();
}
