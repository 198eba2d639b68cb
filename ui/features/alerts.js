// The alerts panel: what fires now (one `alerts` event per board tick, from Rust's
// alert_desk.rs), acknowledging an alert with a reason and an end, and opening a product when
// a notification or the tray asks (`open-product`). The count in the banner is what nobody
// took: the same number the tray shows.
import { invoke, listen } from "../api.js";
import { t, onLanguageChange, currentLanguage, clock } from "../i18n.js";
import { showError, showNotice, clearFeedback, cell } from "../feedback.js";
import { byId, query } from "../dom.js";
import { may } from "../session.js";
import { openProduct } from "./board.js";

/** @typedef {import("../types").AlertsUpdate} AlertsUpdate */
/** @typedef {import("../types").AlertState} AlertState */
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

/** @param {AlertState} s */
function row(s) {
  const tr = document.createElement("tr");
  tr.dataset.key = s.alert.key;
  tr.className = s.acknowledged ? "acked" : "firing";
  tr.append(cell(t(s.alert.kind)), cell(s.alert.product_id), cell(s.alert.value));
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
  tbody.replaceChildren(...alerts.map(row));
}

/** @param {boolean} open */
function setOpen(open) {
  panel.hidden = !open;
  toggle.setAttribute("aria-expanded", String(open));
}

/** @param {number | null} product */
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
