// Reconcile and rewrite: the ledger check with its progress, then dry runs and fenced
// rewrites of the products picked on the board, or, with nothing picked, of the products the
// latest board tick says a rewrite repairs (the core's rule, `rewrite::repairs`). A dry run
// says what it would write and the drift it would leave. On production every product id must
// be typed again before a rewrite is sent (and the core refuses it otherwise).
import { invoke, listen } from "../api.js";
import { t, onLanguageChange } from "../i18n.js";
import { showError, clearFeedback, cell, errorNodes } from "../feedback.js";
import { selection, connection, onConnect } from "../session.js";
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
/** The products the latest board tick says a rewrite repairs; null before the first tick, and over an adapter (whose sale the rewrite refuses). @type {number[] | null} */
let repairable = null;
/** What the form last put in the field itself (a pick, or the products that drift): refilled on opening while the field still shows it. */
let filled = "";
/** How many products that drift `filled` holds; null when it holds a pick (no line above the field then). @type {number | null} */
let filledFromDrift = null;
/** Whether the person has been in the field since the form opened: a tick then fills nothing (an emptied field is theirs to type into). */
let touched = false;

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
  renderDryRunSaid(items);
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
        // 0: no run started (a dry run, a busy lock), so no token and no row of its own.
        cell(r?.fence_token || null, "num fence"),
        cell(r?.audit_id || null, "num audit"),
        cell("", "problem"),
      );
      // The refusal in the window's language (messages.js), its server detail apart.
      if (item.error) /** @type {HTMLElement} */ (tr.lastElementChild).replaceChildren(...errorNodes(item.error));
      return tr;
    }),
  );
}

/**
 * What each dry run would do, in a sentence: the value it would write over Redis's, and the
 * drift it would leave (as the CLI's `rewrite --dry-run` says it).
 * @param {RewriteItem[]} items
 */
function renderDryRunSaid(items) {
  const list = byId("dry-run-said");
  const dry = items.flatMap((item) => (item.result?.outcome === "DRY_RUN" ? [item.result] : []));
  list.replaceChildren(
    ...dry.map((r) => {
      const li = document.createElement("li");
      li.dataset.productId = String(r.product_id);
      const vars = { id: r.product_id, before: r.before ?? "-", after: r.after ?? "-", delta: signed(r.delta), drift: r.drift_after ?? "-" };
      // The kinds of write the core's plan names (rebuild, reset, delta), or none.
      const would = r.before === null
        ? t("dryRunRebuild", vars)
        : r.reading?.history_lost
          ? t("dryRunReset", vars)
          : r.before === r.after
            ? t("dryRunNothing", vars)
            : t("dryRunWrite", vars);
      li.textContent = `${would} ${t("dryRunTookNothing")}`;
      return li;
    }),
  );
  list.hidden = dry.length === 0;
}

/** @param {number} n */
function signed(n) {
  return n > 0 ? `+${n}` : String(n);
}

/**
 * The line above the products: what the form was filled with, when it was filled from the
 * products that drift (nothing picked on the board).
 */
function renderPrefill() {
  const line = byId("rw-prefill");
  const n = productsInput.value === filled ? filledFromDrift : null;
  line.hidden = n === null;
  line.textContent = n === null
    ? ""
    : n === 0
      ? t("rwNothingDrifts")
      : t(n === 1 ? "rwPrefilledOne" : "rwPrefilled", { n, ids: filled });
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
  onLanguageChange(renderPrefill);
  listen("board-tick", (tick) => {
    repairable = tick.repairable;
    // Opened before a tick said what drifts (at start, or on a new connection): filled now,
    // once; a list already shown is not changed under the user's hands.
    const unfilled = !touched && filled === "" && filledFromDrift === null && productsInput.value === "";
    if (repairable && unfilled && !selection.size && !byId("screen-repair").hidden) {
      fill(repairable.join(", "), repairable.length);
      renderPrefill();
    }
  });
  // Another connection, maybe another sale: what the form filled in itself goes.
  onConnect(() => {
    repairable = null;
    if (productsInput.value === filled) fill("", null);
    renderPrefill();
  });
  productsInput.addEventListener("input", renderPrefill);
  for (const event of ["focus", "input"]) productsInput.addEventListener(event, () => (touched = true));
}

export function show() {
  touched = false;
  // A pick on the board wins; with none, the products a rewrite repairs, unless the field
  // holds ids typed by hand (a value the form did not fill in itself).
  if (selection.size) {
    fill([...selection].join(", "), null);
  } else if (repairable && (productsInput.value === "" || productsInput.value === filled)) {
    fill(repairable.join(", "), repairable.length);
  }
  renderPrefill();
}

/**
 * @param {string} ids
 * @param {number | null} fromDrift how many products that drift `ids` are; null for a pick
 */
function fill(ids, fromDrift) {
  productsInput.value = ids;
  filled = ids;
  filledFromDrift = fromDrift;
}
