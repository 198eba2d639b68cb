// The live board: every product, most severe first, updated by one `board-tick` event per
// sampler tick (no polling here). Only the rows in view exist in the DOM (a windowed list),
// so 5,000 products cost the same to draw as 40. Also the health strip and the drift chart.
import { invoke, listen } from "../api.js";
import { t, onLanguageChange, currentLanguage, clock } from "../i18n.js";
import { showError, showNotice, clearFeedback, cell } from "../feedback.js";
import { invalid } from "../messages.js";
import { selection, onConnect } from "../session.js";
import { byId, query } from "../dom.js";
import { openFor } from "./timeline.js";

/** @typedef {import("../types").Reading} Reading */
/** @typedef {import("../types").ProductId} ProductId */
/** @typedef {import("../types").BoardTick} BoardTick */
/** @typedef {import("../types").Health} Health */
/** @typedef {import("../types").Guarantee} Guarantee */
/** @typedef {import("../main.js").ScreenContext} ScreenContext */

const ROW_HEIGHT = 28; // px; must match `#products tbody tr` in style.css
const OVERSCAN = 10;

const scroller = byId("board-scroll");
const tbody = query("#products tbody");
const statusFilter = /** @type {HTMLSelectElement} */ (byId("status-filter"));
const search = /** @type {HTMLInputElement} */ (byId("search"));
const chartPanel = byId("chart-panel");
const chartImg = /** @type {HTMLImageElement} */ (byId("chart"));

/** @type {Reading[]} */
let all = [];
/** @type {Reading[]} */
let shown = [];
let drawQueued = false;
let chartBusy = false;
/** @type {ScreenContext} */
let ctx;

/**
 * @param {Reading} r
 * @param {string} status a DriftStatus, or "" for all
 * @param {string} needle lower case, or "" for all
 */
function matches(r, status, needle) {
  if (status && r.status !== status) return false;
  if (!needle) return true;
  return String(r.product_id).includes(needle) || r.name.toLowerCase().includes(needle);
}

function refilter() {
  const status = statusFilter.value;
  const needle = search.value.trim().toLowerCase();
  shown = status || needle ? all.filter((r) => matches(r, status, needle)) : all;
  byId("board-count").textContent = t("countOf", { shown: shown.length, total: all.length });
  scheduleDraw();
}

function scheduleDraw() {
  if (drawQueued) return;
  drawQueued = true;
  requestAnimationFrame(() => {
    drawQueued = false;
    draw();
  });
}

// Two spacer rows above and below the rows in view keep the scroll height of the whole list.
function spacer() {
  const tr = document.createElement("tr");
  tr.className = "spacer";
  return tr;
}
const topSpacer = spacer();
const bottomSpacer = spacer();

/**
 * @param {HTMLElement} tr
 * @param {number} px
 */
function setHeight(tr, px) {
  const height = `${px}px`;
  if (tr.style.height !== height) tr.style.height = height;
}

/** Rows drawn last time, by product id, with what they showed. @type {Map<ProductId, { sig: string, tr: HTMLElement }>} */
let drawn = new Map();

/**
 * Everything a row shows: the same signature means the same row can stay.
 * @param {Reading} r
 */
function signature(r) {
  return [r.status, r.name, r.initial_stock, r.db_stock, r.live_orders_qty, r.inflight_pending, r.pending_release,
    r.redis_stock, r.expected_redis, r.drift, r.in_flight, selection.has(r.product_id), currentLanguage()].join("|");
}

/** @param {Reading} r */
function row(r) {
  const tr = document.createElement("tr");
  tr.dataset.productId = String(r.product_id);
  tr.className = `status-${r.status}${selection.has(r.product_id) ? " picked" : ""}`;
  const pick = document.createElement("td");
  const box = document.createElement("input");
  box.type = "checkbox";
  box.className = "pick";
  box.checked = selection.has(r.product_id);
  box.setAttribute("aria-label", t("pickRow", { id: r.product_id }));
  box.addEventListener("change", () => {
    if (box.checked) selection.add(r.product_id);
    else selection.delete(r.product_id);
    tr.classList.toggle("picked", box.checked);
    renderSelection();
  });
  pick.append(box);
  // A sold-out product is OK and says so; every status explains itself on hover (and in
  // the legend above the board, for the keyboard).
  // A product over an adapter that did not settle says how many entries wait in flight.
  const soldOut = r.status === "OK" && r.db_stock <= 0;
  const shownStatus = soldOut
    ? `${t(r.status)} · ${t("soldOut")}`
    : r.status === "UNSETTLED" && r.in_flight > 0
      ? `${t(r.status)} · ${t("inFlightEntries", { n: r.in_flight })}`
      : t(r.status);
  const status = cell(shownStatus, "status");
  status.dataset.status = r.status;
  status.title = t(`why_${r.status}`);
  tr.append(
    pick,
    cell(r.product_id, "num id"),
    cell(r.name, "name"),
    status,
    cell(r.initial_stock, "num"),
    cell(r.db_stock, "num"),
    cell(r.live_orders_qty, "num"),
    cell(r.inflight_pending, "num"),
    cell(r.pending_release, "num"),
    cell(r.redis_stock, "num"),
    cell(r.expected_redis, "num"),
    cell(r.drift, "num drift"),
  );
  return tr;
}

// The rows in view, plus a few either side. A row whose product shows the same values is kept
// as it is, and the DOM is only touched where the wanted rows differ from the drawn ones, so
// a tick that changes nothing in view costs no layout and no paint.
function draw() {
  const first = Math.max(0, Math.floor(scroller.scrollTop / ROW_HEIGHT) - OVERSCAN);
  const count = Math.ceil(scroller.clientHeight / ROW_HEIGHT) + 2 * OVERSCAN;
  const last = Math.min(shown.length, first + count);
  const wanted = [];
  const next = new Map();
  if (first > 0) {
    setHeight(topSpacer, first * ROW_HEIGHT);
    wanted.push(topSpacer);
  }
  for (let i = first; i < last; i++) {
    const r = shown[i];
    const sig = signature(r);
    const before = drawn.get(r.product_id);
    const tr = before && before.sig === sig ? before.tr : row(r);
    next.set(r.product_id, { sig, tr });
    wanted.push(tr);
  }
  if (last < shown.length) {
    setHeight(bottomSpacer, (shown.length - last) * ROW_HEIGHT);
    wanted.push(bottomSpacer);
  }
  drawn = next;
  // A row redrawn under the keyboard's focus hands the focus to its new self.
  const focused = document.activeElement instanceof HTMLElement && tbody.contains(document.activeElement)
    ? document.activeElement.closest("tr")?.dataset.productId
    : undefined;
  wanted.forEach((tr, i) => {
    if (tbody.children[i] !== tr) tbody.insertBefore(tr, tbody.children[i] ?? null);
  });
  while (tbody.children.length > wanted.length) /** @type {Element} */ (tbody.lastElementChild).remove();
  if (focused && !tbody.contains(document.activeElement)) focusPick(focused);
}

/** @param {string} productId */
function focusPick(productId) {
  /** @type {HTMLInputElement | null} */ (tbody.querySelector(`tr[data-product-id="${productId}"] input.pick`))?.focus();
}

/**
 * Arrow keys move between the rows' boxes (Space picks): the row is scrolled into view and
 * drawn first, since only the rows in view exist.
 * @param {KeyboardEvent} e
 */
function onRowKey(e) {
  const box = e.target;
  if (!(box instanceof HTMLInputElement) || !box.classList.contains("pick")) return;
  if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
  e.preventDefault();
  // A product id is a number or text (a sale keyed by SKUs): compared as the row wrote it.
  const id = box.closest("tr")?.dataset.productId;
  const index = shown.findIndex((r) => String(r.product_id) === id) + (e.key === "ArrowDown" ? 1 : -1);
  const target = shown[index];
  if (!target) return;
  const header = query("#products thead").offsetHeight;
  const top = index * ROW_HEIGHT;
  if (top < scroller.scrollTop) scroller.scrollTop = top;
  else if (top + ROW_HEIGHT + header > scroller.scrollTop + scroller.clientHeight) {
    scroller.scrollTop = top + ROW_HEIGHT + header - scroller.clientHeight;
  }
  draw();
  focusPick(String(target.product_id));
}

function renderSelection() {
  byId("selection-count").textContent = t("selected", { n: selection.size });
}

/** @param {number | null | undefined} v */
function ms(v) {
  return v === null || v === undefined ? "-" : `${v.toFixed(1)} ms`;
}

/** @type {Record<Guarantee, import("../i18n.js").MessageKey>} */
const GUARANTEE_WORDS = {
  replica: "guaranteeReplica",
  db_write_through: "guaranteeDbWriteThrough",
  no_replicas: "guaranteeNoReplicas",
  none_opted_out: "guaranteeNoneOptedOut",
};

/**
 * What an ACCEPTED answer survives on this sale (the core's weakest of the live engines'),
 * with what it means one hover away.
 * @param {Health | null | undefined} h
 */
function renderGuarantee(h) {
  const box = byId("health-guarantee");
  const g = h?.accepted_guarantee;
  box.textContent = g ? t(GUARANTEE_WORDS[g]) : "-";
  box.className = g ? `guarantee-${g}` : "";
  byId("health-guarantee-box").title = !h
    ? ""
    : g
      ? t("guaranteeHint", { engines: h.engines_may_lose_accepted })
      : t("guaranteeUnknown");
}

/**
 * What the console's connection uses, in the window's language (the core's `Transport`; its
 * cipher names stay as the server says them).
 * @param {import("../types").Transport} tr
 */
function transportText(tr) {
  const cert = (/** @type {boolean} */ yes) => (yes ? t("tr_client_cert") : "");
  const parts = [];
  if (tr.mysql_mode) {
    const tls = tr.mysql_tls ? `${tr.mysql_tls}${cert(tr.mysql_client_cert)}` : t("tr_clear");
    parts.push(t("tr_mysql", { mode: t(`ssl_${tr.mysql_mode}`), tls }));
  }
  if (tr.has_redis) {
    const how = !tr.redis_tls
      ? t("tr_clear")
      : `${t(tr.redis_ca_pinned ? "tr_redis_pinned" : "tr_redis_system")}${cert(tr.redis_client_cert)}`;
    parts.push(t("tr_redis", { how }));
  }
  return parts.join(currentLanguage() === "zh" ? "；" : "; ");
}

/** @param {BoardTick} tick */
function renderHealth(tick) {
  const h = tick.health;
  byId("health-redis").textContent = h ? ms(h.redis_ms) : "-";
  byId("health-db").textContent = h ? ms(h.db_ms) : "-";
  byId("health-backlog").textContent = h ? String(h.stream_backlog) : "-";
  byId("health-release").textContent = h ? String(h.pending_releases) : "-";
  const mode = byId("health-mode");
  mode.textContent = h
    ? `${t(h.engine_mode)}${h.products_off_normal ? ` +${h.products_off_normal}` : ""} (${h.engines_applied}/${h.engines_live})`
    : "-";
  mode.className = h ? `mode-${h.engine_mode}` : "";
  renderGuarantee(h);
  // A production sale reached without TLS: the core names the servers, the window says so.
  const clear = h?.in_clear ?? [];
  byId("health-clear-box").hidden = clear.length === 0;
  byId("health-clear").textContent = clear.join(", ");
  byId("health-clear-box").title = h ? transportText(h.transport) : "";
  byId("health-took").textContent = ms(tick.took_ms);
  byId("health-at").textContent = clock(new Date(tick.at));
  // A sale over its adapter has no engine of ours to probe: not a failure.
  byId("health").classList.toggle("bad", !h && !tick.adapter);
  byId("health").title = tick.health_error ?? "";
  byId("health-adapter-box").hidden = !tick.adapter;
  byId("health-adapter").textContent = tick.adapter?.sale ?? "-";
}

/** Drawn only when what it shows changed. */
let lostShown = "";

/**
 * The lost-orders panel of a sale read over its adapter: each product's orders accepted,
 * acknowledged by the sale's consumer and never a row.
 * @param {BoardTick} tick
 */
function renderLost(tick) {
  const panel = byId("lost-panel");
  const a = tick.adapter;
  panel.hidden = !a;
  const sig = a ? JSON.stringify([a.lost_knowable, a.lost, currentLanguage()]) : "";
  if (!a || sig === lostShown) return;
  lostShown = sig;
  const orders = a.lost.reduce((n, p) => n + p.order_ids.length, 0);
  byId("lost-summary").textContent = !a.lost_knowable
    ? t("lostUnknowable")
    : orders === 0
      ? t("lostNone")
      : t("lostSummary", { orders, products: a.lost.length });
  panel.classList.toggle("bad", orders > 0);
  const body = query("#lost-orders tbody");
  body.replaceChildren(
    ...a.lost.map((p) => {
      const tr = document.createElement("tr");
      tr.dataset.productId = String(p.product_id);
      tr.append(cell(p.product_id, "num id"), cell(p.name, "name"), cell(p.order_ids.length, "num"),
        cell(p.order_ids.join(", "), "order-ids"));
      return tr;
    }),
  );
  byId("lost-orders").hidden = a.lost.length === 0;
}

function chartLabels() {
  return { title: t("chartTitle"), x_axis: t("chartAxisX"), y_axis: t("chartAxisY") };
}

async function drawChart() {
  if (chartPanel.hidden || chartBusy || selection.size === 0) return;
  chartBusy = true;
  try {
    const width = Math.max(400, Math.min(2000, chartPanel.clientWidth - 16));
    const svg = await invoke("drift_chart", { products: [...selection], labels: chartLabels(), width, height: 320 });
    // As an image: the SVG cannot run anything, and the strict CSP needs no exception.
    chartImg.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
    chartImg.alt = t("chartAlt", { products: [...selection].join(", ") });
  } catch (err) {
    showError(err);
  } finally {
    chartBusy = false;
  }
}

// From a tick's arrival to the frame after its rows were drawn: what the user waits for.
// Shown in the health strip, so a slow board is visible (and measurable: BENCHMARKS.md).
/** @param {number} arrived when the tick arrived (performance.now()) */
function measureUpdate(arrived) {
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      byId("health-render").textContent = ms(performance.now() - arrived);
    }),
  );
}

/** @param {BoardTick} tick */
function onTick(tick) {
  const arrived = performance.now();
  all = tick.readings;
  renderHealth(tick);
  renderLost(tick);
  refilter();
  measureUpdate(arrived);
  drawChart();
}

/** @param {ScreenContext} context */
export function init(context) {
  ctx = context;
  listen("board-tick", onTick);
  // The reading's failure as the core said it: the server's words, under a sentence of ours.
  listen("board-error", (message) => showError({ kind: "query", code: "query_failed", params: { detail: message }, message }));
  scroller.addEventListener("scroll", scheduleDraw, { passive: true });
  tbody.addEventListener("keydown", onRowKey);
  window.addEventListener("resize", scheduleDraw);
  statusFilter.addEventListener("change", () => {
    scroller.scrollTop = 0;
    refilter();
  });
  search.addEventListener("input", () => {
    scroller.scrollTop = 0;
    refilter();
  });
  byId("clear-selection").addEventListener("click", () => {
    selection.clear();
    renderSelection();
    scheduleDraw();
  });
  byId("show-chart").addEventListener("click", () => {
    if (selection.size === 0) return showError(invalid("pickProducts"));
    clearFeedback();
    chartPanel.hidden = false;
    scroller.classList.add("with-chart");
    byId("chart-products").textContent = [...selection].join(", ");
    drawChart();
  });
  byId("close-chart").addEventListener("click", () => {
    chartPanel.hidden = true;
    scroller.classList.remove("with-chart");
  });
  byId("export-png").addEventListener("click", async () => {
    clearFeedback();
    try {
      const path = /** @type {HTMLInputElement} */ (byId("png-path")).value || null;
      // In the window's language: the PNG font has Latin and CJK glyphs (chart/font.rs).
      const saved = await invoke("export_drift_png", { products: [...selection], labels: chartLabels(), path });
      showNotice(() => t("pngSaved", { path: saved }));
    } catch (err) {
      showError(err);
    }
  });
  // "What happened to this product": the timeline of the one product picked.
  byId("timeline-selected").addEventListener("click", () => {
    if (selection.size !== 1) return showError(invalid("tlPickOne"));
    openFor([...selection][0]);
  });
  byId("rewrite-selected").addEventListener("click", () => {
    if (selection.size === 0) return showError(invalid("pickProducts"));
    ctx.showScreen("repair");
  });
  onConnect(() => {
    all = [];
    lostShown = "";
    byId("lost-panel").hidden = true;
    chartPanel.hidden = true;
    scroller.classList.remove("with-chart");
    renderSelection();
    refilter();
  });
  onLanguageChange(() => {
    refilter();
    renderSelection();
    drawChart();
  });
  renderSelection();
}

export function show() {
  scheduleDraw();
}

/**
 * Opens one product, as a notification or an alert asks: the board narrowed to it, the
 * product picked (ready for "Rewrite selected…") and its drift chart shown.
 * @param {ProductId} productId
 */
export function openProduct(productId) {
  statusFilter.value = "";
  search.value = String(productId);
  scroller.scrollTop = 0;
  selection.clear();
  selection.add(productId);
  renderSelection();
  refilter();
  byId("show-chart").click();
}
