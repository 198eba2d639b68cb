// The sale's timeline (issue 53): what happened to the sale over a recent stretch, newest
// first, each event with who, why, what came of it and the record behind it. The core reads it
// (`timeline_read`, oldest first); the window turns it newest first, filters it by kind, and
// reads it again on every board tick while the screen is open, so it follows the live sale
// without a poll loop of its own. The board and the alerts panel open it on one product
// (`openFor`).
import { invoke, listen } from "../api.js";
import { t, wordOf, appendOptions, currentLanguage, onLanguageChange } from "../i18n.js";
import { showError, clearFeedback, cell } from "../feedback.js";
import { onConnect } from "../session.js";
import { byId, query } from "../dom.js";
import { OUTCOMES } from "./audit.js";

/** @typedef {import("../types").Timeline} Timeline */
/** @typedef {import("../types").TimelineEvent} TimelineEvent */
/** @typedef {import("../types").EventKind} EventKind */
/** @typedef {import("../types").ProductId} ProductId */
/** @typedef {import("../main.js").ScreenContext} ScreenContext */

/** The most events one read lists: the newest of the window. */
const LIMIT = 500;

/**
 * Every kind of event, in the order the kind filter lists them, said by its key.
 * @type {Record<EventKind, import("../i18n.js").MessageKey>}
 */
const KINDS = {
  switch_change: "tk_switch_change", guided_exit: "tk_guided_exit", rewrite: "tk_rewrite", repair: "tk_repair",
  alert_acknowledged: "tk_alert_acknowledged", alert_ack_closed: "tk_alert_ack_closed",
  compensation_step: "tk_compensation_step", drill_started: "tk_drill_started", drill_fault: "tk_drill_fault",
  drill_verdict: "tk_drill_verdict", audit: "tk_audit",
};

/**
 * The outcomes the timeline's records write, said in the window's language: the audit log's
 * words, a compensation case's steps, a drill fault's and an acknowledgement's close; an
 * outcome not listed is shown as recorded.
 * @type {Record<string, import("../i18n.js").MessageKey>}
 */
const TIMELINE_OUTCOMES = {
  ...OUTCOMES,
  OPEN: "sk_OPEN", PROPOSE: "sk_PROPOSE", APPROVE: "sk_APPROVE", REJECT: "sk_REJECT", EXECUTE: "sk_EXECUTE",
  EXECUTED: "sk_EXECUTED", CLOSE: "sk_CLOSE", NOTE: "sk_NOTE",
  INJECTED: "tlo_INJECTED", RESTORED: "tlo_RESTORED", CLEARED: "tlo_CLEARED", EXPIRED: "tlo_EXPIRED",
};

const tbody = query("#timeline tbody");
const productField = /** @type {HTMLInputElement} */ (byId("tl-product"));
const kindField = /** @type {HTMLSelectElement} */ (byId("tl-kind"));
const spanField = /** @type {HTMLSelectElement} */ (byId("tl-since"));

/** @type {ScreenContext} */
let ctx;
/** The last read, oldest first as the core lists it. @type {Timeline | null} */
let latest = null;
/** What is drawn now, so a read that changed nothing redraws nothing (focus stays). */
let drawn = "";
let reading = false;
/** A read asked for while one was out: read again once it is back. */
let again = false;

const isOpen = () => !byId("screen-timeline").hidden;

/** The product filter's text as an id: a whole number is a number, else text; empty: none. */
function product() {
  const text = productField.value.trim();
  if (!text) return null;
  return /^\d+$/.test(text) ? Number(text) : text;
}

/** @param {TimelineEvent} e */
function row(e) {
  const tr = document.createElement("tr");
  tr.dataset.kind = e.kind;
  tr.dataset.at = e.at;
  tr.dataset.record = `${e.record.table}#${e.record.id}`;
  if (e.product_id !== null) tr.dataset.productId = String(e.product_id);
  const kind = cell(t(KINDS[e.kind]), "action");
  kind.dataset.code = e.kind;
  const outcome = cell(wordOf(TIMELINE_OUTCOMES, e.outcome), "outcome");
  outcome.dataset.code = e.outcome;
  // The records' own words: who as the server knows them, why as typed, the figures in the
  // core's English.
  const actor = cell(e.actor, "actor");
  actor.dataset.userText = "";
  const reason = cell(e.reason, "reason");
  reason.dataset.userText = "";
  const detail = cell(e.detail, "detail");
  detail.lang = "en";
  const linked = e.audit_id !== null && e.record.table !== "audit_log" ? ` · audit_log#${e.audit_id}` : "";
  tr.append(
    cell(`${e.at.replace("T", " ")} UTC`, "at"),
    kind,
    cell(e.product_id ?? t("tlWholeSale"), "product"),
    actor,
    reason,
    outcome,
    detail,
    cell(`${e.record.table}#${e.record.id}${linked}`, "record"),
  );
  return tr;
}

/** Draws the last read, newest first, of the kind picked. */
function render() {
  if (!latest) {
    tbody.replaceChildren();
    byId("tl-empty").hidden = true;
    byId("tl-truncated").hidden = true;
    drawn = "";
    return;
  }
  const kind = kindField.value;
  const events = latest.events.filter((e) => !kind || e.kind === kind).reverse();
  const signature = [currentLanguage(), kind, latest.truncated, ...events.map((e) => `${e.record.table}#${e.record.id}`)].join("|");
  if (signature === drawn) return;
  drawn = signature;
  tbody.replaceChildren(...events.map(row));
  byId("tl-empty").hidden = events.length > 0;
  const truncated = byId("tl-truncated");
  truncated.hidden = !latest.truncated;
  truncated.textContent = t("tlTruncated", { n: latest.events.length });
}

/** Reads the timeline again (one read at a time: one asked for meanwhile follows it). */
async function load() {
  if (reading) {
    again = true;
    return;
  }
  reading = true;
  try {
    latest = await invoke("timeline_read", { product: product(), minutes: Number(spanField.value), limit: LIMIT });
    render();
  } catch (err) {
    showError(err);
  } finally {
    reading = false;
    if (again) {
      again = false;
      load();
    }
  }
}

/** @param {ScreenContext} context */
export function init(context) {
  ctx = context;
  appendOptions(kindField, KINDS);
  kindField.addEventListener("change", render);
  spanField.addEventListener("change", () => {
    clearFeedback();
    load();
  });
  productField.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      clearFeedback();
      load();
    }
  });
  productField.addEventListener("change", load);
  byId("tl-all-products").addEventListener("click", () => {
    productField.value = "";
    clearFeedback();
    load();
  });
  // Follows the live sale: every reading of the board reads the timeline again while it shows.
  listen("board-tick", () => {
    if (isOpen()) load();
  });
  onConnect(() => {
    latest = null;
    render();
  });
  onLanguageChange(() => {
    drawn = "";
    render();
  });
}

export function show() {
  load();
}

/**
 * Opens the timeline on one product, as the board or an alert asks ("what happened to this
 * product"): every kind, the product's events and those of the whole sale.
 * @param {ProductId} productId
 */
export function openFor(productId) {
  productField.value = String(productId);
  kindField.value = "";
  latest = null;
  render();
  clearFeedback();
  ctx.showScreen("timeline");
}
