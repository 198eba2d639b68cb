// The sale overview, the first screen after connecting: its figures come with one
// `overview-tick` event per sampler tick (no polling here); the burn-down is drawn in Rust on
// request: when the screen opens, when a product is picked, and then again while units keep
// selling, at most every BURN_EVERY_MS.
import { invoke, listen } from "../api.js";
import { t, wordOf, BREAKER_STATES, onLanguageChange, clock } from "../i18n.js";
import { showError, clearFeedback, cell } from "../feedback.js";
import { onConnect } from "../session.js";
import { byId, query } from "../dom.js";
import { alertFigure, alertWhy, firingFor } from "./alerts.js";

/** @typedef {import("../types").Overview} Overview */
/** @typedef {import("../types").EngineFigures} EngineFigures */

const BURN_EVERY_MS = 5000;

const productInput = /** @type {HTMLInputElement} */ (byId("ov-product"));
const burnImg = /** @type {HTMLImageElement} */ (byId("ov-burndown"));
const screen = byId("screen-overview");
/** @type {Overview | null} */
let last = null;
/** The product whose burn-down is shown; null: the whole sale. @type {number | null} */
let product = null;
let burnAt = 0;
let burnSold = Number.NaN;
let burnBusy = false;
let burnAgain = false;

/**
 * @param {number | null | undefined} v
 * @param {number} [digits]
 */
function num(v, digits = 0) {
  return v === null || v === undefined ? "-" : v.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** @param {number | null | undefined} v */
function ms(v) {
  return v === null || v === undefined ? "-" : `${num(v, 1)} ms`;
}

/** @param {EngineFigures} e */
function engineRow(e) {
  const tr = document.createElement("tr");
  tr.dataset.instance = e.instance_id;
  tr.className = e.answer;
  const answer =
    e.answer === "answered"
      ? t("ovAnswered")
      : e.answer === "stale"
        ? t("stale", { s: Math.round(e.heartbeat_age_ms / 1000) })
        : `${t("ovNotAnswering")}: ${e.error ?? ""}`;
  tr.append(
    cell(e.instance_id, "id"),
    cell(e.listen_addr),
    cell(answer, "answer"),
    cell(e.requests, "num requests"),
    cell(e.orders_per_s === null ? null : num(e.orders_per_s, 1), "num rate"),
    cell(wordOf(BREAKER_STATES, e.breaker_state), "breaker"),
  );
  return tr;
}

/**
 * The first line: is the sale safe, in one sentence and one colour.
 * @param {import("../types").Verdict} v
 */
function renderVerdict(v) {
  const line = byId("ov-verdict");
  line.className = `verdict verdict-${v.level}`;
  line.dataset.level = v.level;
  if (v.level === "exact") {
    line.textContent = t("ovVerdictExact");
    return;
  }
  /** @type {string[]} */
  const parts = [];
  if (v.oversold) parts.push(t("ovVerdictOversold", { n: v.oversold }));
  if (v.ledger_mismatch) parts.push(t("ovVerdictLedger", { n: v.ledger_mismatch }));
  if (v.drifting) parts.push(t("ovVerdictDrifting", { n: v.drifting }));
  if (v.other) parts.push(t("ovVerdictOther", { n: v.other }));
  const level = t(v.level === "unsafe" ? "ovVerdictUnsafe" : "ovVerdictWatch");
  line.textContent = `${level}${t("verdictSep")}${parts.join(t("listSep"))}${t("ovVerdictUnacked", { n: v.unacknowledged })}`;
}

/** The sale over its adapter this screen shows (none: our own sale). */
let overAdapter = "";

/**
 * On a sale read over its adapter, the figures only our engines have (answers other than an
 * order, p99, the backlog, the mode, the engines, the burn-down of our orders table) are left
 * out, and a line says whose figures the rest are.
 */
function renderOverAdapter() {
  for (const e of document.querySelectorAll("#screen-overview [data-engine-only]")) {
    /** @type {HTMLElement} */ (e).hidden = Boolean(overAdapter);
  }
  const note = byId("ov-adapter-note");
  note.hidden = !overAdapter;
  note.textContent = overAdapter ? t("ovOverAdapter", { sale: overAdapter }) : "";
}

function render() {
  const o = last;
  if (o) overAdapter = o.over_adapter ?? "";
  renderOverAdapter();
  if (!o) return;
  const s = o.sale;
  const r = o.orders;
  renderVerdict(o.verdict);
  byId("ov-sold").textContent = num(s.sold_units);
  byId("ov-sold-of").textContent = t("ovSoldOf", { initial: num(s.initial_units), pct: num(s.sold_pct, 1), left: num(s.remaining_units) });
  byId("ov-rate").textContent = num(r.orders_per_s, 1);
  byId("ov-accepted-rate").textContent = t("ovAcceptedRate", { n: num(r.accepted_per_s, 1) });
  byId("ov-accepted").textContent = num(r.accepted);
  byId("ov-soldout").textContent = num(r.sold_out);
  byId("ov-errors").textContent = num(r.errors);
  byId("ov-refused").textContent = num(r.refused);
  byId("ov-p99").textContent = ms(r.p99_ms);
  byId("ov-p99-total").textContent = t("ovSinceStart", { v: ms(r.p99_total_ms) });
  byId("ov-backlog").textContent = num(r.backlog);
  const mode = byId("ov-mode");
  mode.textContent = `${t(o.mode)}${o.products_off_normal ? ` +${o.products_off_normal}` : ""}`;
  mode.className = `mode-${o.mode}`;
  const silent = o.engines.filter((e) => e.answer !== "answered").length;
  byId("ov-engines-summary").textContent = o.engines.length
    ? t("ovEnginesSummary", { answered: o.engines.length - silent, total: o.engines.length })
    : t("ovNoEngines");
  byId("ov-figures").classList.toggle("partial", silent > 0);
  query("#ov-engines tbody").replaceChildren(...o.engines.map(engineRow));
  byId("ov-alerts").replaceChildren(
    ...(o.alerts.length
      ? o.alerts.map(({ alert: a, since, acknowledged: ack }) => {
          const li = document.createElement("li");
          li.dataset.alert = a.key;
          li.className = ack ? "acked" : "firing";
          const taken = ack ? t("ovAckedBy", { who: ack.acked_by, why: ack.reason }) : t("ovNotAcked");
          // The alert in words (its kind, its product), not its key: a key is not a sentence;
          // then what its value measures and how long it has fired; on hover, what to do.
          const what = a.product_id === null ? t(a.kind) : `${t(a.kind)} ${a.product_id}`;
          const figure = alertFigure(a);
          const about = [...(figure === null ? [] : [figure]), firingFor(since, o.at)].join(t("listSep"));
          li.textContent = t("ovAlertLine", { what, about, taken });
          li.title = alertWhy(a.kind);
          return li;
        })
      : [emptyItem(t("ovNoAlerts"))]),
  );
  byId("ov-cases").replaceChildren(
    ...(o.compensation_open.length
      ? o.compensation_open.map((c) => {
          const li = document.createElement("li");
          li.dataset.caseId = String(c.id);
          li.textContent = t("ovCase", { id: c.id, product: c.product_id, status: t(`st_${c.status}`), lines: c.lines });
          return li;
        })
      : [emptyItem(t("ovNoCases"))]),
  );
  byId("ov-at").textContent = t("ovAt", { at: clock(new Date(o.at)) });
}

/** @param {string} text */
function emptyItem(text) {
  const li = document.createElement("li");
  li.className = "empty";
  li.textContent = text;
  return li;
}

async function drawBurnDown() {
  // Our own orders table's: a sale over its adapter has none of ours.
  if (overAdapter) return;
  if (screen.hidden) return;
  // A draw asked for while one is in flight (a language switch, say) runs after it, so the
  // chart never keeps the words of the moment before.
  if (burnBusy) {
    burnAgain = true;
    return;
  }
  burnBusy = true;
  burnAgain = false;
  burnAt = Date.now();
  burnSold = last ? last.sale.sold_units : Number.NaN;
  try {
    const width = Math.max(400, Math.min(2000, screen.clientWidth - 16));
    const series = product === null ? t("ovWholeSale") : t("ovProduct", { id: product });
    const labels = { title: t("ovBurndown"), x_axis: t("ovBurnAxisX"), y_axis: t("ovBurnAxisY") };
    const view = await invoke("burndown_chart", { product, labels, series, width, height: 320 });
    burnImg.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(view.svg)}`;
    burnImg.alt = t("ovBurnAlt", { series, left: view.remaining_units, initial: view.initial_units });
    const info = byId("ov-burndown-info");
    info.dataset.remaining = String(view.remaining_units);
    info.textContent = t("ovBurnInfo", { series, left: num(view.remaining_units), initial: num(view.initial_units), secs: view.bucket_secs });
  } catch (err) {
    showError(err);
  } finally {
    burnBusy = false;
    if (burnAgain) drawBurnDown();
  }
}

/** @param {Overview} o */
function onTick(o) {
  last = o;
  if (screen.hidden) return;
  render();
  if (o.sale.sold_units !== burnSold && Date.now() - burnAt >= BURN_EVERY_MS) drawBurnDown();
}

function pickProduct() {
  clearFeedback();
  const text = productInput.value.trim();
  if (text && !/^\d+$/.test(text)) return showError({ kind: "invalid", message: t("badIds", { text }) });
  product = text ? Number(text) : null;
  drawBurnDown();
}

export function init() {
  listen("overview-tick", onTick);
  listen("overview-error", (message) => showError({ kind: "query", message }));
  byId("ov-product-go").addEventListener("click", pickProduct);
  productInput.addEventListener("keydown", (e) => {
    if (e.key === "Enter") pickProduct();
  });
  byId("ov-whole-sale").addEventListener("click", () => {
    productInput.value = "";
    pickProduct();
  });
  onConnect((info) => {
    last = null;
    overAdapter = info.adapter_sale ?? "";
    renderOverAdapter();
    product = null;
    productInput.value = "";
    burnImg.removeAttribute("src");
  });
  onLanguageChange(() => {
    render();
    drawBurnDown();
  });
}

export function show() {
  render();
  drawBurnDown();
}
