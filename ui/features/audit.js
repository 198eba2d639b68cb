// The audit log: every write action, newest first, filtered by action, outcome and text.
import { invoke } from "../api.js";
import { said, wordOf, appendOptions, onLanguageChange } from "../i18n.js";
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
export const OUTCOMES = {
  COMPLETED: "au_COMPLETED", PLANNED: "au_PLANNED", ON: "au_ON", OFF: "au_OFF", recorded: "au_recorded",
  NORMAL: "NORMAL", DEGRADED: "DEGRADED", PAUSED: "PAUSED", APPLIED: "oc_APPLIED", REBUILT: "oc_REBUILT", NOOP: "oc_NOOP", DRY_RUN: "oc_DRY_RUN",
  REFUSED_FENCE: "oc_REFUSED_FENCE", LOCK_BUSY: "oc_LOCK_BUSY", FAILED: "oc_FAILED", DONE: "lo_DONE",
  SKIPPED: "lo_SKIPPED", STARTED: "au_STARTED", RECORDED: "au_RECORDED", OK: "au_OK",
  ACKNOWLEDGED: "au_ACKNOWLEDGED", CLOSED: "au_CLOSED", DEAD: "DEAD", PASSED: "PASSED", HALTED: "HALTED", INCONCLUSIVE: "INCONCLUSIVE",
  ABORTED: "ABORTED", RUNNING: "RUNNING", requested: "au_requested", "nothing running": "au_nothing_running",
};

/**
 * The actions the log records, said in the window's language: every code the core
 * (`AuditEntry`), the engine (`sandbox.seed`), the adapter's state database (`adapter_*`) and
 * the database's triggers (`compensation.<step>`, from compensation_steps) write, in the order
 * the action filter lists them; an action not listed is shown as recorded. The code stays on
 * the cell (`data-code`) and is the filter's value.
 * @type {Record<string, import("../i18n.js").MessageKey>}
 */
const ACTIONS = {
  rewrite: "ac_rewrite", "rewrite.dry_run": "ac_rewrite_dry_run", "rewrite.begin": "ac_rewrite_begin",
  "degrade.switch": "ac_degrade_switch", "degrade.exit": "ac_degrade_exit",
  "alert.ack": "ac_alert_ack", "alert.ack.closed": "ac_alert_ack_closed",
  "compensation.open": "ac_compensation_open", "compensation.plan": "ac_compensation_plan",
  "compensation.propose": "ac_compensation_propose", "compensation.approve": "ac_compensation_approve",
  "compensation.reject": "ac_compensation_reject", "compensation.execute": "ac_compensation_execute",
  "compensation.executed": "ac_compensation_executed", "compensation.close": "ac_compensation_close",
  "compensation.note": "ac_compensation_note",
  "drill.halt": "ac_drill_halt", "drill.review": "ac_drill_review", "drill.dead": "ac_drill_dead",
  "sandbox.seed": "ac_sandbox_seed", "roles.apply": "ac_roles_apply",
  adapter_rewrite: "ac_adapter_rewrite", adapter_baseline: "ac_adapter_baseline", adapter_switch: "ac_adapter_switch",
};

/**
 * Who wrote a row, as the log records it: a profile's role, or `db` for a row a trigger of
 * the database wrote (a compensation step); the trigger's and a case plan's rows name no
 * environment.
 * @type {Record<string, import("../i18n.js").MessageKey>}
 */
const ROLES = {
  oncall: "oncall", approver: "approver", facilitator: "facilitator", viewer: "viewer", admin: "admin", db: "au_db",
};

/**
 * A cell saying a recorded code in the window's language, the code itself kept on it.
 * @param {Record<string, import("../i18n.js").MessageKey>} table
 * @param {string} code
 * @param {string} className
 */
function coded(table, code, className) {
  const td = cell(wordOf(table, code), className);
  td.dataset.code = code;
  return td;
}

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
    coded(ROLES, a.role, "role"),
    cell(said(a.environment), "environment"),
    coded(ACTIONS, a.action, "action"),
    cell(a.target, "target"),
    cell(a.reason),
    coded(OUTCOMES, a.outcome, "outcome"),
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
  // The action filter's options, one per action listed; the value is the code.
  appendOptions(byId("audit-action"), ACTIONS);
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
