// The audit log: every write action, newest first, filtered by action, outcome and text.
import { invoke } from "../api.js";
import { t, said, wordOf, onLanguageChange } from "../i18n.js";
import { showError, clearFeedback, cell } from "../feedback.js";
import { onConnect } from "../session.js";
import { byId, query } from "../dom.js";

/** @typedef {import("../types").AuditRecord} AuditRecord */

const tbody = query("#audit tbody");
/** @param {string} id */
const value = (id) => /** @type {HTMLInputElement | HTMLSelectElement} */ (byId(id)).value.trim() || null;

/**
 * The outcomes the core and the database's triggers record, said in the window's language;
 * an outcome not listed is shown as recorded.
 * @type {Record<string, import("../i18n.js").MessageKey>}
 */
const OUTCOMES = {
  APPLIED: "oc_APPLIED", REBUILT: "oc_REBUILT", NOOP: "oc_NOOP", DRY_RUN: "oc_DRY_RUN",
  REFUSED_FENCE: "oc_REFUSED_FENCE", LOCK_BUSY: "oc_LOCK_BUSY", FAILED: "oc_FAILED", DONE: "lo_DONE",
  SKIPPED: "lo_SKIPPED", STARTED: "au_STARTED", RECORDED: "au_RECORDED", OK: "au_OK",
  ACKNOWLEDGED: "au_ACKNOWLEDGED", CLOSED: "au_CLOSED", DEAD: "DEAD", PASSED: "PASSED", HALTED: "HALTED",
  ABORTED: "ABORTED", RUNNING: "RUNNING", requested: "au_requested", "nothing running": "au_nothing_running",
};

/**
 * The outcome filter's text as the log records it: a word of the window's language (已写入)
 * is its code (APPLIED); anything else is taken as typed.
 * @param {string | null} typed
 */
function outcomeCode(typed) {
  if (!typed) return null;
  const code = Object.keys(OUTCOMES).find((c) => wordOf(OUTCOMES, c) === typed);
  return code ?? typed;
}

/** @param {AuditRecord} a */
function row(a) {
  const tr = document.createElement("tr");
  tr.dataset.auditId = String(a.id);
  tr.className = `outcome-${a.outcome}`;
  tr.append(
    cell(a.id, "num id"),
    cell(a.at.replace("T", " ")),
    cell(a.claimed_actor && a.claimed_actor !== a.actor ? `${a.actor} (${a.claimed_actor})` : a.actor),
    cell(said(a.role)),
    cell(said(a.environment)),
    cell(a.action, "action"),
    cell(a.target, "target"),
    cell(a.reason),
    cell(wordOf(OUTCOMES, a.outcome), "outcome"),
    details(a.details),
  );
  return tr;
}

/**
 * The details as compact JSON that wraps inside its column (a JSON string has no spaces to
 * break at, so it ran off the page).
 * @param {unknown} value
 */
function details(value) {
  return cell(value ? JSON.stringify(value).replaceAll(",", ", ") : "", "details");
}

async function load() {
  clearFeedback();
  try {
    /** @type {import("../types").AuditFilter} */
    const filter = { action: value("audit-action"), outcome: outcomeCode(value("audit-outcome")), text: value("audit-text"), limit: 500 };
    const rows = await invoke("audit_log", { filter });
    tbody.replaceChildren(...rows.map(row));
  } catch (err) {
    showError(err);
  }
}

export function init() {
  byId("audit-refresh").addEventListener("click", load);
  byId("audit-action").addEventListener("change", load);
  for (const id of ["audit-outcome", "audit-text"]) {
    byId(id).addEventListener("keydown", (e) => e.key === "Enter" && load());
  }
  onConnect(() => tbody.replaceChildren());
  onLanguageChange(() => {
    if (!byId("screen-audit").hidden) load();
  });
}

export function show() {
  load();
}
