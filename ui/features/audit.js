// The audit log: every write action, newest first, filtered by action, outcome and text.
import { invoke } from "../api.js";
import { t, said, onLanguageChange } from "../i18n.js";
import { showError, clearFeedback, cell } from "../feedback.js";
import { onConnect } from "../session.js";
import { byId, query } from "../dom.js";

/** @typedef {import("../types").AuditRecord} AuditRecord */

const tbody = query("#audit tbody");
/** @param {string} id */
const value = (id) => /** @type {HTMLInputElement | HTMLSelectElement} */ (byId(id)).value.trim() || null;

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
    cell(a.outcome, "outcome"),
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
    const filter = { action: value("audit-action"), outcome: value("audit-outcome"), text: value("audit-text"), limit: 500 };
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
