// The degrade switch: each scope's mode, DB mode on with the instances' acknowledgements as
// they arrive, and the guided exit back to Redis shown step by step. On production the exit
// asks for the scope to be typed again (and the core refuses it otherwise).
import { invoke, listen } from "../api.js";
import { t, wordOf, BREAKER_STATES, onLanguageChange } from "../i18n.js";
import { showError, clearFeedback, cell } from "../feedback.js";
import { invalid } from "../messages.js";
import { connection, onConnect } from "../session.js";
import { byId, query } from "../dom.js";

/** @typedef {import("../types").SwitchStatus} SwitchStatus */
/** @typedef {import("../types").Acknowledgement} Acknowledgement */
/** @typedef {import("../types").ExitStep} ExitStep */

const productInput = /** @type {HTMLInputElement} */ (byId("dg-product"));
const reasonInput = /** @type {HTMLInputElement} */ (byId("dg-reason"));
const ackLine = byId("dg-ack");
const steps = byId("dg-steps");
const dialog = /** @type {HTMLDialogElement} */ (byId("exit-dialog"));
/** @type {SwitchStatus | null} */
let last = null;
/** @type {ExitStep[]} */
let stepLog = [];
let busy = false;

/** @param {Acknowledgement} ack */
function describeAck(ack) {
  if (!ack.live) return t("ackNone", { revision: ack.revision });
  const took = ack.propagation_ms === null ? "" : t("ackTook", { ms: ack.propagation_ms });
  return t("ackLine", { revision: ack.revision, applied: ack.applied, live: ack.live, took });
}

/** @param {Acknowledgement} ack */
function renderAck(ack) {
  ackLine.textContent = describeAck(ack);
  ackLine.className = `ack ${ack.complete ? "complete" : "waiting"}`;
  query("#instances tbody").replaceChildren(
    ...ack.instances.map((i) => {
      const tr = document.createElement("tr");
      tr.dataset.instance = i.instance_id;
      tr.className = i.live ? (i.applied ? "applied" : "waiting") : "stale";
      tr.append(
        cell(i.instance_id, "id"),
        cell(i.listen_addr),
        cell(i.live ? t("yes") : t("stale", { s: Math.round(i.heartbeat_age_ms / 1000) }), "live"),
        cell(i.applied_revision, "num revision"),
        cell(t(i.effective_mode), `mode mode-${i.effective_mode}`),
        cell(wordOf(BREAKER_STATES, i.breaker_state), "breaker"),
        cell(i.propagation_ms === null ? "-" : `${i.propagation_ms} ms`, "num took"),
      );
      return tr;
    }),
  );
}

function renderScopes() {
  const body = query("#switch-scopes tbody");
  if (!last) return body.replaceChildren();
  if (!last.scopes.length) {
    const tr = document.createElement("tr");
    const td = cell(t("neverSet"));
    td.colSpan = 6;
    tr.append(td);
    return body.replaceChildren(tr);
  }
  body.replaceChildren(
    ...last.scopes.map((s) => {
      const tr = document.createElement("tr");
      tr.dataset.scope = s.scope;
      tr.append(
        cell(s.scope, "scope"),
        cell(t(s.mode), `mode mode-${s.mode}`),
        cell(s.revision, "num revision"),
        cell(s.changed_by),
        cell(s.reason),
        cell(s.changed_at.replace("T", " ")),
      );
      return tr;
    }),
  );
}

/**
 * @param {string} name
 * @param {string} text
 */
function stepItem(name, text) {
  const li = document.createElement("li");
  li.dataset.step = name;
  li.textContent = text;
  return li;
}

// One line per step; the per-product rebuilds fold into one line that counts up, naming the
// products whose stock changed (thousands of products must not push the instances away).
function renderSteps() {
  const items = [];
  const rebuilt = stepLog.filter((s) => s.step === "rebuilt");
  const total = stepLog.find((s) => s.step === "checked")?.products ?? rebuilt.length;
  for (const s of stepLog) {
    if (s.step === "rebuilt") {
      if (s !== rebuilt[0]) continue;
      const changed = rebuilt.filter((r) => r.delta !== 0 || r.outcome === "REBUILT");
      const names = changed.map((r) => `${r.product_id} (${r.delta > 0 ? "+" : ""}${r.delta})`).join(", ");
      items.push(stepItem("rebuilt", t("step_rebuilt_sum", { n: rebuilt.length, total, changed: names || t("none") })));
      continue;
    }
    items.push(stepItem(s.step, t(`step_${s.step}`, stepVars(s))));
  }
  steps.replaceChildren(...items);
}

/**
 * What fills a step's line: its numbers, the instances that applied it, the products drifting.
 * @param {Exclude<ExitStep, { step: "rebuilt" }>} s
 * @returns {Record<string, string | number>}
 */
function stepVars(s) {
  switch (s.step) {
    case "checked":
      return { products: s.products, live_instances: s.live_instances };
    case "paused":
    case "resumed":
      return { revision: s.revision, applied: s.ack.applied, live: s.ack.live };
    case "drained":
      return { inflight_left: s.inflight_left };
    case "verified":
      return { products: s.products, drifting: s.drifting.length ? s.drifting.join(", ") : t("none") };
  }
}

async function refresh() {
  try {
    last = await invoke("degrade_status");
    renderScopes();
    if (!busy) renderAck(last.ack);
  } catch (err) {
    showError(err);
  }
}

/** @returns {number | null} the product id typed, or null for the whole sale */
function scopeProduct() {
  const text = productInput.value.trim();
  if (!text) return null;
  if (!/^\d+$/.test(text)) throw invalid("badIds", { text });
  return Number(text);
}

function reason() {
  const r = reasonInput.value.trim();
  if (!r) throw invalid("reasonRequired");
  return r;
}

/**
 * Asks for the scope typed again; resolves with what was typed, or null if cancelled.
 * @param {string} scope
 * @returns {Promise<string | null>}
 */
function confirmScope(scope) {
  const input = /** @type {HTMLInputElement} */ (byId("exit-confirm-input"));
  const go = /** @type {HTMLButtonElement} */ (byId("exit-confirm-go"));
  byId("exit-confirm-hint").textContent = t("exitConfirmHint", { scope });
  input.value = "";
  go.disabled = true;
  input.oninput = () => (go.disabled = input.value.trim() !== scope);
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "confirm" ? input.value.trim() : null), {
      once: true,
    });
    dialog.returnValue = "";
    dialog.showModal();
    input.focus();
  });
}

/** @param {"on" | "off"} action */
async function run(action) {
  clearFeedback();
  if (busy) return;
  try {
    const product = scopeProduct();
    const why = reason();
    busy = true;
    stepLog = [];
    renderSteps();
    if (action === "on") {
      const toggled = await invoke("degrade_on", { product, reason: why });
      renderAck(toggled.ack);
    } else {
      const scope = product === null ? "global" : `product:${product}`;
      let confirm = null;
      if (connection()?.environment === "production") {
        confirm = await confirmScope(scope);
        if (confirm === null) return;
      }
      const report = await invoke("degrade_exit", { product, reason: why, confirm });
      renderAck(report.resume);
      const done = document.createElement("li");
      done.dataset.step = "done";
      done.textContent = t("exitDone", { revision: report.normal_revision, ms: report.paused_ms, audit: report.audit_id });
      steps.append(done);
    }
  } catch (err) {
    showError(err);
  } finally {
    busy = false;
    await refresh();
  }
}

export function init() {
  byId("dg-on").addEventListener("click", () => run("on"));
  byId("dg-off").addEventListener("click", () => run("off"));
  byId("dg-refresh").addEventListener("click", refresh);
  listen("degrade-ack", (ack) => busy && renderAck(ack));
  listen("degrade-step", (step) => {
    stepLog.push(step);
    renderSteps();
    if (step.step === "paused" || step.step === "resumed") renderAck(step.ack);
  });
  onConnect(() => {
    last = null;
    stepLog = [];
    renderScopes();
    renderSteps();
    ackLine.textContent = "";
  });
  onLanguageChange(() => {
    renderScopes();
    renderSteps();
    if (last && !busy) renderAck(last.ack);
  });
}

export function show() {
  refresh();
}
