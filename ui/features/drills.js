// The Drills screen: pick a built-in drill and run it (refused on production, with the
// reason, before anything starts), watch the run live through one `drill-live` event a second
// (read from the database by Rust; the runner is a process the window never talks to), halt
// every running drill (always possible, audited), and the runs of the sale: reports,
// comparisons and replays. The run panel itself is drills/view.js; the replay drills/replay.js.
import { invoke, listen } from "../api.js";
import { t, onLanguageChange, currentLanguage } from "../i18n.js";
import { showError, showNotice, clearFeedback } from "../feedback.js";
import { onConnect, may } from "../session.js";
import { byId } from "../dom.js";
import { ordered } from "./drills/moment.js";
import { render } from "./drills/view.js";
import * as replay from "./drills/replay.js";
import * as history from "./drills/history.js";

/** @typedef {import("../types").DrillCatalog} DrillCatalog */
/** @typedef {import("../types").RunDetail} RunDetail */
/** @typedef {import("../types").TimedEvent} TimedEvent */
/** @typedef {import("../types").TimelineCharts} TimelineCharts */

const picker = /** @type {HTMLSelectElement} */ (byId("drill-name"));
const runButton = /** @type {HTMLButtonElement} */ (byId("drill-run"));
const stagingBox = /** @type {HTMLInputElement} */ (byId("drill-staging"));
const refusalLine = byId("drill-refusal");
const haltDialog = /** @type {HTMLDialogElement} */ (byId("halt-dialog"));
const haltReason = /** @type {HTMLInputElement} */ (byId("halt-reason"));

/** @type {DrillCatalog | null} */
let catalog = null;
/**
 * The run watched live, as the last `drill-live` left it (its charts the core's, of the
 * whole timeline so far).
 * @type {{ run: RunDetail, timeline: TimedEvent[], charts: TimelineCharts } | null}
 */
let watched = null;
let starting = false;

function drills() {
  return catalog?.drills ?? [];
}

/** Why the Run button is off, in the window's language; null when it may run. */
function refusal() {
  const r = catalog?.refusal;
  const servers = may("run_drills");
  if (!r && !servers.ok) return servers.why;
  if (!r) return null;
  if (r.kind === "role") return t("refusal_role", { role: t(r.role) });
  return t(`refusal_${r.kind}`);
}

function renderPicker() {
  const chosen = picker.value;
  picker.replaceChildren(
    ...drills().map((d) => {
      const option = document.createElement("option");
      option.value = d.name;
      option.textContent = `${currentLanguage() === "zh" ? d.title_zh : d.title_en} (${d.name})`;
      return option;
    }),
  );
  if (chosen) picker.value = chosen;
  renderChoice();
}

function renderChoice() {
  const d = drills().find((x) => x.name === picker.value);
  // The drill files say what a drill proves and name its faults in both languages; a file
  // without the Chinese is described by its Chinese title in the Chinese window.
  const zh = currentLanguage() === "zh";
  byId("drill-about").textContent = d
    ? t("drillAbout", {
        description: zh ? d.description_zh ?? `${d.title_zh}。` : d.description,
        duration: d.duration_s,
        faults: (zh ? d.faults_zh : d.faults).join(zh ? "；" : "; ") || t("none"),
      })
    : "";
  byId("drill-staging-box").hidden = !catalog?.staging;
  const why = refusal();
  const stagingUnconfirmed = Boolean(catalog?.staging) && !stagingBox.checked;
  runButton.disabled = Boolean(why) || stagingUnconfirmed || starting || !d;
  const shown = why ?? (stagingUnconfirmed ? t("refusal_staging_unconfirmed") : null);
  refusalLine.hidden = !shown;
  refusalLine.textContent = shown ?? "";
  runButton.title = shown ?? "";
}

async function loadCatalog() {
  try {
    catalog = await invoke("drill_catalog");
  } catch (err) {
    catalog = null;
    showError(err);
  }
  renderPicker();
}

function drawLive() {
  if (!watched || replay.active()) return;
  render({ ...watched, at: Infinity, replay: false, drills: drills() });
}

async function start() {
  clearFeedback();
  const short = Number(/** @type {HTMLSelectElement} */ (byId("drill-short")).value);
  const extra = Number(/** @type {HTMLInputElement} */ (byId("drill-extra-db")).value || 0);
  starting = true;
  renderChoice();
  try {
    const started = await invoke("drill_start", {
      drill: picker.value,
      short: short < 1 ? short : null,
      extra_db_latency_ms: Math.max(0, Math.round(extra)),
      staging_confirmed: stagingBox.checked,
    });
    showNotice(() => t("drillStartedMsg", { id: started.run_id, pid: started.pid, log: started.log }));
    replay.close();
    await history.refresh();
  } catch (err) {
    showError(err);
  } finally {
    starting = false;
    renderChoice();
  }
}

/** Asks for a reason (it goes to the audit log); resolves with it, or null if cancelled. */
function askReason() {
  const go = /** @type {HTMLButtonElement} */ (byId("halt-go"));
  haltReason.value = "";
  go.disabled = true;
  haltReason.oninput = () => (go.disabled = !haltReason.value.trim());
  return new Promise((resolve) => {
    haltDialog.addEventListener(
      "close",
      () => resolve(haltDialog.returnValue === "confirm" ? haltReason.value.trim() : null),
      { once: true },
    );
    haltDialog.returnValue = "";
    haltDialog.showModal();
    haltReason.focus();
  });
}

async function halt() {
  clearFeedback();
  const reason = await askReason();
  if (reason === null) return;
  try {
    const asked = await invoke("drill_halt", { reason });
    showNotice(() => asked.length ? t("haltAsked", { runs: asked.map((id) => `#${id}`).join(", ") }) : t("haltNone"));
    await history.refresh();
  } catch (err) {
    showError(err);
  }
}

/** @param {number} runId */
async function openReplay(runId) {
  clearFeedback();
  try {
    const { run, timeline, charts } = await invoke("drill_timeline", { run_id: runId });
    replay.open(run, ordered(timeline), charts, drills());
    byId("drill-view").scrollIntoView({ block: "start" });
  } catch (err) {
    showError(err);
  }
}

/** @param {number} runId */
async function watch(runId) {
  clearFeedback();
  replay.close();
  try {
    await invoke("drill_watch", { run_id: runId });
  } catch (err) {
    showError(err);
  }
}

export function init() {
  replay.init();
  history.init({ replay: openReplay, watch });
  picker.addEventListener("change", renderChoice);
  stagingBox.addEventListener("change", renderChoice);
  runButton.addEventListener("click", start);
  byId("drill-halt").addEventListener("click", halt);
  listen("drill-live", ({ run, events, first, charts }) => {
    const previous = watched && !first && watched.run.id === run.id ? watched.timeline : [];
    const statusChanged = watched?.run.status !== run.status || watched?.run.dead !== run.dead;
    watched = { run, timeline: ordered([...previous, ...events]), charts };
    drawLive();
    if (first || statusChanged) history.refresh();
  });
  onConnect(() => {
    catalog = null;
    watched = null;
    replay.close();
    byId("drill-view").hidden = true;
    history.reset();
    if (!byId("screen-drills").hidden) show();
  });
  onLanguageChange(() => {
    renderPicker();
    history.relabel();
    if (replay.active()) replay.redraw();
    else drawLive();
  });
}

export function show() {
  if (!catalog) loadCatalog();
  history.refresh();
}
