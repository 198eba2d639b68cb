// Reconcile and rewrite: the ledger check with its progress, then dry runs and fenced
// rewrites of the products picked on the board. On production every product id must be
// typed again before a rewrite is sent (and the core refuses it otherwise).
import { invoke, listen } from "../api.js";
import { t, onLanguageChange } from "../i18n.js";
import { showError, clearFeedback, cell, errorNodes } from "../feedback.js";
import { selection, connection } from "../session.js";
import { byId, query } from "../dom.js";
import { invalid } from "../messages.js";

/** @typedef {import("../types").RewriteItem} RewriteItem */
/** @typedef {import("../types").LedgerReport} LedgerReport */

const productsInput = /** @type {HTMLInputElement} */ (byId("rw-products"));
const reasonInput = /** @type {HTMLInputElement} */ (byId("rw-reason"));
const resultsBody = query("#rewrite-results tbody");
const progress = /** @type {HTMLProgressElement} */ (byId("ledger-progress"));
const dialog = /** @type {HTMLDialogElement} */ (byId("confirm-dialog"));
/** @type {LedgerReport | null} */
let lastReport = null;

function parseIds() {
  const text = productsInput.value.trim();
  const parts = text.split(/[\s,]+/).filter(Boolean);
  if (!parts.length || parts.some((p) => !/^\d+$/.test(p))) {
    throw { kind: "invalid", key: parts.length ? "badIds" : "pickProducts", vars: { text } };
  }
  return [...new Set(parts.map(Number))];
}

/** The results shown, redrawn in the other language on a switch. @type {RewriteItem[]} */
let lastItems = [];

/** @param {RewriteItem[]} items */
function renderResults(items) {
  lastItems = items;
  resultsBody.replaceChildren(
    ...items.map((item) => {
      const r = item.result;
      const tr = document.createElement("tr");
      tr.dataset.productId = String(item.product_id);
      tr.className = r && !item.error ? `outcome-${r.outcome}` : "failed";
      tr.append(
        cell(item.product_id, "num id"),
        cell(r ? t(`oc_${r.outcome}`) : t(item.error?.kind ?? "error"), "outcome"),
        cell(r?.before, "num before"),
        cell(r?.after, "num after"),
        cell(r?.delta, "num delta"),
        cell(r?.drift_after, "num drift-after"),
        cell(r?.fence_token, "num fence"),
        cell(r?.audit_id, "num audit"),
        cell("", "problem"),
      );
      // The refusal in the window's language (messages.js), its server detail apart.
      if (item.error) /** @type {HTMLElement} */ (tr.lastElementChild).replaceChildren(...errorNodes(item.error));
      return tr;
    }),
  );
}

/**
 * Asks for every id to be typed again; resolves with the ids typed, or null if cancelled.
 * @param {number[]} ids
 * @returns {Promise<number[] | null>}
 */
function confirmTyped(ids) {
  const fields = byId("confirm-fields");
  const go = /** @type {HTMLButtonElement} */ (byId("confirm-go"));
  const labels = ids.map((id) => {
    const label = document.createElement("label");
    const span = document.createElement("span");
    span.textContent = t("typeId", { id });
    const input = document.createElement("input");
    input.className = "confirm-id";
    input.dataset.expect = String(id);
    input.inputMode = "numeric";
    label.append(span, input);
    return label;
  });
  fields.replaceChildren(...labels);
  const inputs = labels.map((l) => /** @type {HTMLInputElement} */ (l.querySelector("input")));
  for (const input of inputs) {
    input.addEventListener("input", () => {
      go.disabled = !inputs.every((i) => i.value.trim() === i.dataset.expect);
    });
  }
  go.disabled = true;
  return new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => resolve(dialog.returnValue === "confirm" ? inputs.map((i) => Number(i.value.trim())) : null),
      { once: true },
    );
    dialog.returnValue = "";
    dialog.showModal();
    inputs[0]?.focus();
  });
}

/** @param {boolean} dryRun */
async function rewrite(dryRun) {
  clearFeedback();
  try {
    const products = parseIds();
    const reason = reasonInput.value.trim();
    if (!reason) throw invalid("reasonRequired");
    /** @type {number[] | null} */
    let confirmed = [];
    if (!dryRun && connection()?.environment === "production") {
      confirmed = await confirmTyped(products);
      if (!confirmed) return;
    }
    renderResults(await invoke("rewrite_products", { products, reason, dry_run: dryRun, confirmed }));
  } catch (err) {
    showError(err);
  }
}

function renderLedger() {
  const box = byId("ledger-result");
  const r = lastReport;
  if (!r) return box.replaceChildren();
  const summary = document.createElement("p");
  summary.id = "ledger-summary";
  summary.textContent = t("ledgerSummary", {
    checked: r.products_checked, chunks: r.chunks, ms: r.total_ms.toFixed(0),
    slowest: r.slowest_statement_ms.toFixed(1), server: r.server,
    replica: r.replica_lag_secs === null ? "" : t("onReplica", { lag: r.replica_lag_secs }),
  });
  if (!r.mismatches.length) {
    const ok = document.createElement("p");
    ok.textContent = t("noMismatch");
    return box.replaceChildren(summary, ok);
  }
  const table = document.createElement("table");
  table.id = "ledger-mismatches";
  const head = document.createElement("tr");
  for (const k of /** @type {const} */ (["product", "initial", "dbStock", "live", "gap", "oversold"])) {
    const th = document.createElement("th");
    th.textContent = t(k);
    head.append(th);
  }
  const body = document.createElement("tbody");
  for (const m of r.mismatches) {
    const tr = document.createElement("tr");
    tr.className = m.oversold ? "status-OVERSOLD" : "status-LEDGER_MISMATCH";
    tr.append(cell(m.product_id, "num"), cell(m.initial_stock, "num"), cell(m.db_stock, "num"),
      cell(m.live_orders_qty, "num"), cell(m.gap, "num"), cell(t(m.oversold ? "yes" : "no")));
    body.append(tr);
  }
  const thead = document.createElement("thead");
  thead.append(head);
  table.append(thead, body);
  box.replaceChildren(summary, table);
}

async function runLedger() {
  clearFeedback();
  const button = /** @type {HTMLButtonElement} */ (byId("run-ledger"));
  button.disabled = true;
  progress.hidden = false;
  progress.value = 0;
  try {
    lastReport = await invoke("run_ledger");
    progress.value = progress.max;
    renderLedger();
  } catch (err) {
    showError(err);
  } finally {
    button.disabled = false;
  }
}

/** The ledger check's last progress, said again in the other language on a switch. @type {{ done: number; total: number } | null} */
let lastProgress = null;

function renderProgress() {
  byId("ledger-progress-text").textContent = lastProgress ? t("ledgerProgress", lastProgress) : "";
}

export function init() {
  listen("ledger-progress", (p) => {
    progress.max = Math.max(1, p.total);
    progress.value = p.done;
    lastProgress = { done: p.done, total: p.total };
    renderProgress();
  });
  byId("run-ledger").addEventListener("click", runLedger);
  byId("dry-run").addEventListener("click", () => rewrite(true));
  byId("rewrite").addEventListener("click", () => rewrite(false));
  onLanguageChange(renderLedger);
  onLanguageChange(renderProgress);
  onLanguageChange(() => renderResults(lastItems));
}

export function show() {
  if (selection.size) productsInput.value = [...selection].join(", ");
}
