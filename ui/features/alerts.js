// The alerts panel: what fires now (one `alerts` event per board tick, from Rust's
// alert_desk.rs), acknowledging an alert with a reason and an end, and opening a product when
// a notification or the tray asks (`open-product`). The count in the banner is what nobody
// took: the same number the tray shows. Each alert says what its value measures, how long it
// has fired (since its first reading, kept by Rust's alerts::Onsets) and, on hover, what it
// means and what to do; the overview's alert list says the same through these helpers.
import { invoke, listen } from "../api.js";
import { t, onLanguageChange, currentLanguage, clock } from "../i18n.js";
import { showError, showNotice, clearFeedback, cell } from "../feedback.js";
import { byId, query } from "../dom.js";
import { may } from "../session.js";
import { openProduct } from "./board.js";
import { openFor } from "./timeline.js";

/** @typedef {import("../types").AlertsUpdate} AlertsUpdate */
/** @typedef {import("../types").AlertState} AlertState */
/** @typedef {import("../types").Alert} Alert */
/** @typedef {import("../types").ProductId} ProductId */
/** @typedef {import("../main.js").ScreenContext} ScreenContext */

const panel = byId("alerts-panel");
const toggle = byId("alerts-toggle");
const tbody = query("#alerts-table tbody");
const dialog = /** @type {HTMLDialogElement} */ (byId("ack-dialog"));
const reason = /** @type {HTMLTextAreaElement} */ (byId("ack-reason"));
const until = /** @type {HTMLSelectElement} */ (byId("ack-for"));

/** @type {AlertsUpdate | null} */
let latest = null;
/** The alert the dialog acknowledges. @type {string | null} */
let acking = null;
/** @type {ScreenContext} */
let ctx;

/** @param {string} naive a NaiveDateTime from Rust (UTC, no zone) */
function localTime(naive) {
  return clock(new Date(`${naive}Z`));
}

/**
 * What the alert's value measures, in words ("drift 3", "gap 4", "3 units beyond stock",
 * "backlog 120", "2 engines"); null when it has none.
 * @param {Alert} a
 */
export function alertFigure(a) {
  const n = a.value;
  if (n === null) return a.kind === "KEY_MISSING" ? t("av_KEY_MISSING") : null;
  if (n === 1 && a.kind === "OVERSOLD") return t("av_OVERSOLD_one");
  if (n === 1 && a.kind === "BREAKER_OPEN") return t("av_BREAKER_OPEN_one");
  return t(`av_${a.kind}`, { n });
}

/**
 * How long an alert has fired, from when it began to `now` ("for 3 min").
 * @param {string} since when it began (Rust's time)
 * @param {string} now the time of the update that carries it (Rust's time too)
 */
export function firingFor(since, now) {
  const secs = Math.max(0, Math.floor((Date.parse(now) - Date.parse(since)) / 1000));
  if (secs < 60) return t("firingForS", { n: secs });
  const min = Math.floor(secs / 60);
  if (min < 60) return t("firingForMin", { n: min });
  return t("firingForH", { h: Math.floor(min / 60), m: min % 60 });
}

/**
 * What an alert of `kind` means and what to do next: its hover text.
 * @param {Alert["kind"]} kind
 */
export function alertWhy(kind) {
  return t(`why_${kind}`);
}

/**
 * @param {AlertState} s
 * @param {string} now
 */
function row(s, now) {
  const tr = document.createElement("tr");
  tr.dataset.key = s.alert.key;
  tr.className = s.acknowledged ? "acked" : "firing";
  const kind = cell(`${t(s.alert.kind)} · ${firingFor(s.since, now)}`, "kind");
  kind.dataset.kind = s.alert.kind;
  kind.title = alertWhy(s.alert.kind);
  tr.append(kind, cell(s.alert.product_id), cell(alertFigure(s.alert), "value"));
  const ack = s.acknowledged;
  tr.append(
    cell(
      ack
        ? t("ackBy", { who: ack.acked_by, until: ack.until_at ? localTime(ack.until_at) : t("ackUntilCleared"), reason: ack.reason })
        : "-",
      "ack",
    ),
  );
  const actions = document.createElement("td");
  const open = document.createElement("button");
  open.type = "button";
  open.className = "open-product";
  open.textContent = t("alertOpen");
  open.addEventListener("click", () => show(s.alert.product_id ?? null));
  actions.append(open);
  const productId = s.alert.product_id;
  if (productId !== null) {
    // "What happened to this product": its timeline.
    const history = document.createElement("button");
    history.type = "button";
    history.className = "open-timeline";
    history.textContent = t("tlWhatHappened");
    history.addEventListener("click", () => {
      setOpen(false);
      openFor(productId);
    });
    actions.append(history);
  }
  if (!ack) {
    const take = document.createElement("button");
    take.type = "button";
    take.className = "ack";
    take.dataset.right = "acknowledge_alerts";
    take.textContent = t("alertAckBtn");
    const allowed = may("acknowledge_alerts");
    take.disabled = !allowed.ok;
    take.title = allowed.why;
    take.addEventListener("click", () => ask(s));
    actions.append(take);
  }
  tr.append(actions);
  return tr;
}

function render() {
  const alerts = latest?.alerts ?? [];
  const unacked = alerts.filter((s) => !s.acknowledged).length;
  byId("alerts-count").textContent = String(unacked);
  toggle.classList.toggle("firing", unacked > 0);
  byId("alerts-empty").hidden = alerts.length > 0;
  byId("alerts-table").hidden = alerts.length === 0;
  byId("alerts-error").textContent = latest?.error ?? "";
  const now = latest?.at ?? new Date().toISOString();
  tbody.replaceChildren(...alerts.map((s) => row(s, now)));
}

/** @param {boolean} open */
function setOpen(open) {
  panel.hidden = !open;
  toggle.setAttribute("aria-expanded", String(open));
}

/** @param {ProductId | null} product */
function show(product) {
  ctx.showScreen("board");
  if (product !== null) openProduct(product);
}

/** @param {AlertState} s */
function ask(s) {
  acking = s.alert.key;
  const product = s.alert.product_id;
  byId("ack-what").textContent = product === null ? t(s.alert.kind) : `${t(s.alert.kind)} · ${t("product")} ${product}`;
  reason.value = "";
  until.value = "";
  dialog.showModal();
  reason.focus();
}

async function acknowledge() {
  const key = acking;
  if (!key) return;
  clearFeedback();
  try {
    await invoke("alert_acknowledge", { key, reason: reason.value, minutes: until.value ? Number(until.value) : null });
    showNotice(t("ackDone", { key }));
  } catch (err) {
    showError(err);
  }
}

/** @param {ScreenContext} context */
export function init(context) {
  ctx = context;
  listen("alerts", (update) => {
    latest = update;
    render();
  });
  listen("open-product", (open) => {
    setOpen(false);
    show(open.product_id ?? null);
  });
  toggle.addEventListener("click", () => setOpen(panel.hidden));
  byId("alerts-close").addEventListener("click", () => setOpen(false));
  dialog.addEventListener("close", () => {
    if (dialog.returnValue === "confirm") acknowledge();
    acking = null;
  });
  const tell = () => invoke("set_language", { lang: currentLanguage() }).catch(() => {});
  onLanguageChange(() => {
    render();
    tell();
  });
  tell();
  invoke("alerts_current").then((update) => {
    if (update && !latest) {
      latest = update;
      render();
    }
  });
}
