// Attach a sale (the Connections screen): where the sale is, then the proposal of `adapter init`
// as a form (stockguard_core::adapter::attach), checked by the core on every edit with a preview
// reading of the first products, then saved as a profile with its adapter file. What is wrong is
// said in the field's own line, in the window's language; nothing is judged here.
import { invoke } from "../api.js";
import { t, clock, wordOf, onLanguageChange } from "../i18n.js";
import { showError, showNotice, clearFeedback, cell } from "../feedback.js";
import { byId } from "../dom.js";
import { passwordsSaid } from "./connections.js";

/** @typedef {import("../types").ProposalForm} ProposalForm */
/** @typedef {import("../types").FormCheck} FormCheck */
/** @typedef {import("../types").FieldProblem} FieldProblem */
/** @typedef {import("../types").AttachTarget} AttachTarget */
/** @typedef {import("../types").PreviewRow} PreviewRow */
/** @typedef {import("../types").StatusMeaning} StatusMeaning */
/** @typedef {import("../types").EnvironmentKind} EnvironmentKind */
/** @typedef {import("../types").Role} Role */
/** @typedef {import("../i18n.js").MessageKey} MessageKey */
/** @typedef {import("../main.js").ScreenContext} ScreenContext */

/**
 * A text field of the form: how it is read from the proposal and written back into it.
 * @typedef {[(f: ProposalForm) => string | null | undefined, (f: ProposalForm, v: string) => void]} Access
 */

const section = byId("attach");
const opener = byId("attach-open");
const where = /** @type {HTMLFormElement} */ (byId("attach-where"));
const formEl = /** @type {HTMLFormElement} */ (byId("attach-form"));
const statusRows = /** @type {HTMLElement} */ (byId("attach-statuses").querySelector("tbody"));
const previewRows = /** @type {HTMLElement} */ (byId("attach-preview").querySelector("tbody"));
const initialFrom = /** @type {HTMLSelectElement} */ (formEl.elements.namedItem("stock_initial_from"));
const source = /** @type {HTMLSelectElement} */ (formEl.elements.namedItem("inflight_source"));
const MEANINGS = /** @type {const} */ (["live", "reserving", "released"]);
/** Where a reading's initial stock came from (the core's words). @type {Record<string, MessageKey>} */
const INITIAL_SOURCES = { column: "is_column", number: "is_number", baseline: "is_baseline", none: "is_none" };
/** Milliseconds of quiet typing before the form is checked again. */
const QUIET_MS = 700;

/** The form as the person edits it (the core's last check gave its statuses). @type {ProposalForm | null} */
let form = null;
/** @type {FormCheck | null} */
let lastCheck = null;
/** @type {PreviewRow[]} */
let readings = [];
let readAt = "";
let reading = false;
/** Where the sale is, as read when the proposal was asked for. @type {AttachTarget | null} */
let target = null;
/** Each check asked for is numbered: only the newest one's answer is shown. */
let asked = 0;
let timer = 0;
/** @type {ScreenContext} */
let ctx;

/** @param {string} v */
const optional = (v) => (v.trim() ? v : null);

/** @type {Record<string, Access>} */
const TEXT = {
  name: [(f) => f.name, (f, v) => { f.name = v; }],
  stock_table: [(f) => f.stock?.table, (f, v) => { if (f.stock) f.stock.table = v; }],
  stock_product: [(f) => f.stock?.product, (f, v) => { if (f.stock) f.stock.product = v; }],
  stock_remaining: [(f) => f.stock?.remaining, (f, v) => { if (f.stock) f.stock.remaining = v; }],
  stock_reserved: [(f) => f.stock?.reserved, (f, v) => { if (f.stock) f.stock.reserved = optional(v); }],
  stock_name: [(f) => f.stock?.name, (f, v) => { if (f.stock) f.stock.name = optional(v); }],
  stock_initial: [
    (f) => {
      const initial = f.stock?.initial;
      if (initial?.from === "column") return initial.column;
      if (initial?.from === "fixed") return String(initial.units);
      return "";
    },
    (f, v) => setInitial(f, initialFrom.value, v),
  ],
  orders_table: [(f) => f.orders?.table, (f, v) => { if (f.orders) f.orders.table = v; }],
  orders_product: [(f) => f.orders?.product, (f, v) => { if (f.orders) f.orders.product = v; }],
  orders_quantity: [(f) => f.orders?.quantity_column, (f, v) => { if (f.orders) f.orders.quantity_column = optional(v); }],
  orders_status: [(f) => f.orders?.status, (f, v) => { if (f.orders) f.orders.status = v; }],
  orders_order_id: [(f) => f.orders?.order_id, (f, v) => { if (f.orders) f.orders.order_id = optional(v); }],
  orders_created: [(f) => f.orders?.created, (f, v) => { if (f.orders) f.orders.created = optional(v); }],
  orders_user: [(f) => f.orders?.user, (f, v) => { if (f.orders) f.orders.user = optional(v); }],
  orders_join_table: [(f) => f.orders?.join?.table, (f, v) => { if (f.orders?.join) f.orders.join.table = v; }],
  orders_join_on: [(f) => f.orders?.join?.on, (f, v) => { if (f.orders?.join) f.orders.join.on = v; }],
  orders_join_key: [(f) => f.orders?.join?.key, (f, v) => { if (f.orders?.join) f.orders.join.key = v; }],
  redis_stock: [
    (f) => {
      const stock = f.redis?.stock;
      return stock?.form === "counter" ? stock.template : stock?.key;
    },
    (f, v) => {
      const stock = f.redis?.stock;
      if (stock?.form === "counter") stock.template = v;
      else if (stock) stock.key = v;
    },
  ],
  redis_hash_total: [
    (f) => { const s = f.redis?.stock; return s?.form === "hash" ? s.total : ""; },
    (f, v) => { const s = f.redis?.stock; if (s?.form === "hash") s.total = v; },
  ],
  redis_hash_sold: [
    (f) => { const s = f.redis?.stock; return s?.form === "hash" ? s.sold : ""; },
    (f, v) => { const s = f.redis?.stock; if (s?.form === "hash") s.sold = v; },
  ],
  redis_bucket_count: [
    (f) => { const s = f.redis?.stock; return s?.form === "buckets" ? s.count : ""; },
    (f, v) => { const s = f.redis?.stock; if (s?.form === "buckets") s.count = v; },
  ],
  redis_buyers: [(f) => f.redis?.buyers, (f, v) => { if (f.redis) f.redis.buyers = optional(v); }],
  inflight_stream: [
    (f) => (f.inflight.source === "redis_stream" ? f.inflight.stream : ""),
    (f, v) => { if (f.inflight.source === "redis_stream") f.inflight.stream = v; },
  ],
  inflight_group: [
    (f) => (f.inflight.source === "redis_stream" ? f.inflight.group : ""),
    (f, v) => { if (f.inflight.source === "redis_stream") f.inflight.group = v; },
  ],
  inflight_product_field: [
    (f) => (f.inflight.source === "none" ? "" : f.inflight.product_field),
    (f, v) => {
      if (f.inflight.source === "redis_stream") f.inflight.product_field = v;
      else if (f.inflight.source === "rabbitmq") f.inflight.product_field = optional(v);
    },
  ],
  inflight_order_id_field: [
    (f) => (f.inflight.source === "redis_stream" ? f.inflight.order_id_field : ""),
    (f, v) => { if (f.inflight.source === "redis_stream") f.inflight.order_id_field = optional(v); },
  ],
  inflight_url: [
    (f) => (f.inflight.source === "rabbitmq" ? f.inflight.url : ""),
    (f, v) => { if (f.inflight.source === "rabbitmq") f.inflight.url = v; },
  ],
  inflight_queue: [
    (f) => (f.inflight.source === "rabbitmq" ? f.inflight.queue : ""),
    (f, v) => { if (f.inflight.source === "rabbitmq") f.inflight.queue = v; },
  ],
  inflight_management_url: [
    (f) => (f.inflight.source === "rabbitmq" ? f.inflight.management_url ?? "" : ""),
    (f, v) => { if (f.inflight.source === "rabbitmq") f.inflight.management_url = optional(v); },
  ],
};

/**
 * The initial stock as chosen: a column, a number, or a baseline recorded on saving.
 * @param {ProposalForm} f
 * @param {string} from
 * @param {string} value
 */
function setInitial(f, from, value) {
  if (!f.stock) return;
  if (from === "column") f.stock.initial = { from: "column", column: value };
  else if (from === "fixed") f.stock.initial = { from: "fixed", units: Number(value) || 0 };
  else f.stock.initial = { from: "baseline" };
}

/** @param {string} name */
function input(name) {
  return /** @type {HTMLInputElement} */ (formEl.elements.namedItem(name));
}

/** @param {string} name @param {boolean} shown */
function showField(name, shown) {
  const label = input(name).closest("label");
  if (label) label.hidden = !shown;
}

/** Which fields this sale's shape has: sections it lacks and the other forms' fields are hidden. */
function shape() {
  if (!form) return;
  byId("attach-stock").hidden = !form.stock;
  byId("attach-orders").hidden = !form.orders;
  byId("attach-redis").hidden = !form.redis;
  // A section the proposal found nothing for can still be added: its fields start empty and
  // the check says what each needs.
  byId("attach-add-stock").hidden = !!form.stock;
  byId("attach-add-orders").hidden = !!form.orders;
  byId("attach-add-redis").hidden = !!form.redis;
  for (const name of ["orders_join_table", "orders_join_on", "orders_join_key"]) showField(name, !!form.orders?.join);
  const stock = form.redis?.stock;
  showField("redis_hash_total", stock?.form === "hash");
  showField("redis_hash_sold", stock?.form === "hash");
  showField("redis_bucket_count", stock?.form === "buckets");
  showField("stock_initial", form.stock?.initial.from !== "baseline");
  const from = form.inflight.source;
  for (const name of ["inflight_stream", "inflight_group", "inflight_order_id_field"]) showField(name, from === "redis_stream");
  for (const name of ["inflight_url", "inflight_queue", "inflight_management_url"]) showField(name, from === "rabbitmq");
  showField("inflight_product_field", from !== "none");
}

/** Every field from the form (when a proposal arrives, never while the person types). */
function fill() {
  if (!form) return;
  for (const [name, [get]] of Object.entries(TEXT)) input(name).value = get(form) ?? "";
  initialFrom.value = form.stock?.initial.from ?? "baseline";
  source.value = form.inflight.source;
  shape();
}

/** The statuses found, each with its orders counted and what its orders do with their unit. */
function renderStatuses() {
  const statuses = form?.orders?.statuses ?? [];
  statusRows.replaceChildren(
    ...statuses.map((s, i) => {
      const tr = document.createElement("tr");
      tr.dataset.status = s.value;
      const choice = document.createElement("select");
      choice.name = `status_${i}`;
      choice.setAttribute("aria-label", t("attachStatusLabel", { value: s.value }));
      for (const m of MEANINGS) {
        const option = document.createElement("option");
        option.value = m;
        option.textContent = t(`sm_${m}`);
        choice.append(option);
      }
      choice.value = s.meaning;
      choice.addEventListener("change", () => {
        s.meaning = /** @type {StatusMeaning} */ (choice.value);
        soon();
      });
      const what = document.createElement("td");
      what.append(choice);
      tr.append(cell(s.value, "status-value"), cell(s.orders, "orders"), what);
      return tr;
    }),
  );
}

/** A status value the sale has no order of yet (a sale attached before it opens), holding a unit. */
function addStatus() {
  const field = input("add_status");
  const value = field.value.trim();
  const statuses = form?.orders?.statuses;
  if (!value || !statuses || statuses.some((s) => s.value === value)) return;
  statuses.push({ value, orders: 0, meaning: "live" });
  field.value = "";
  renderStatuses();
  soon();
}

/** A problem said in the window's language; a rule of the file keeps the core's English. @param {FieldProblem} p */
function problemNodes(p) {
  /** @type {Node[]} */
  const nodes = [document.createTextNode(t(`ap_${p.problem}`, { name: p.name, id: "${id}" }))];
  if (p.problem === "rule") {
    const raw = document.createElement("span");
    raw.className = "detail";
    raw.lang = "en";
    raw.textContent = p.detail;
    nodes.push(document.createTextNode(" "), raw);
  }
  return nodes;
}

/** Each problem in its field's own line; one whose field is not shown, on the whole form. */
function renderProblems() {
  for (const spot of /** @type {NodeListOf<HTMLElement>} */ (section.querySelectorAll("[data-error-for]"))) {
    spot.replaceChildren();
  }
  for (const field of /** @type {NodeListOf<HTMLElement>} */ (section.querySelectorAll("[data-field]"))) {
    field.removeAttribute("aria-invalid");
    field.classList.remove("invalid");
  }
  for (const p of lastCheck?.problems ?? []) {
    const spot = /** @type {HTMLElement | null} */ (section.querySelector(`[data-error-for="${p.field}"]`));
    const shown = spot && !spot.closest("[hidden]") ? spot : byId("attach-whole");
    if (shown.childNodes.length) shown.append(document.createTextNode(" "));
    shown.append(...problemNodes(p));
    // A field a person types into says it to assistive technology; the statuses table (a rule
    // about which statuses hold a unit) is marked by its look only, aria-invalid being no
    // attribute of a table.
    const marked = section.querySelector(`[data-field="${p.field}"]`);
    if (marked?.matches("input, select, textarea")) marked.setAttribute("aria-invalid", "true");
    else marked?.classList.add("invalid");
  }
}

/** The sampled keys with their values, and what waits in flight. */
function renderSamples() {
  const keys = lastCheck?.keys ?? [];
  byId("attach-keys").replaceChildren(
    ...keys.map((k) => {
      const li = document.createElement("li");
      li.textContent = k.value === null ? t("attachKeyMissing", { key: k.key }) : t("attachKeySample", { key: k.key, value: k.value });
      return li;
    }),
  );
  const depth = lastCheck?.in_flight;
  byId("attach-depth").textContent = depth === null || depth === undefined ? "" : t("attachDepth", { n: depth });
}

function renderPreview() {
  previewRows.replaceChildren(
    ...readings.map((r) => {
      const tr = document.createElement("tr");
      tr.dataset.product = String(r.product_id);
      tr.className = `st-${r.status}`;
      tr.append(
        cell(r.name ? `${r.product_id} ${r.name}` : r.product_id),
        cell(t(r.status), "status"),
        cell(`${r.initial_stock} (${wordOf(INITIAL_SOURCES, r.initial_source)})`),
        cell(r.db_stock),
        cell(r.live_orders_qty),
        cell(r.redis_stock),
        cell(r.expected_redis),
        cell(r.drift, "drift"),
        cell(r.in_flight),
      );
      return tr;
    }),
  );
  const state = byId("attach-preview-state");
  if (reading) state.textContent = t("attachReading");
  else if (lastCheck && lastCheck.problems.length) state.textContent = t("attachPreviewBlocked");
  else if (readAt) state.textContent = t("attachPreviewRead", { at: readAt, n: readings.length, total: lastCheck?.products ?? 0 });
  else state.textContent = "";
  section.setAttribute("aria-busy", String(reading));
}

function render() {
  renderStatuses();
  renderProblems();
  renderSamples();
  renderPreview();
}

/** Where the sale is, from the first form. @returns {AttachTarget} */
function readTarget() {
  const f = /** @param {string} name */ (name) => /** @type {HTMLInputElement} */ (where.elements.namedItem(name)).value;
  return {
    mysql_url: f("mysqlUrl"),
    mysql_password: optional(f("mysqlPassword")),
    redis_url: f("redisUrl"),
    redis_password: optional(f("redisPassword")),
    amqp_url: optional(f("amqpUrl")),
    state_url: optional(f("stateUrl")),
    state_password: optional(f("statePassword")),
    keys: optional(f("keys")),
  };
}

/** @param {() => Promise<void>} action */
async function run(action) {
  clearFeedback();
  try {
    await action();
  } catch (err) {
    showError(err);
  }
}

/** @param {SubmitEvent} event */
async function propose(event) {
  event.preventDefault();
  await run(async () => {
    target = readTarget();
    reading = true;
    section.setAttribute("aria-busy", "true");
    try {
      const proposed = await invoke("attach_propose", { target });
      form = proposed.check.form;
      lastCheck = proposed.check;
      readings = [];
      readAt = "";
      formEl.hidden = false;
      fill();
      showNotice(() => t("attachProposed", { n: proposed.keys_sampled }));
    } finally {
      reading = false;
    }
    render();
    // The reading of the proposal as it stands.
    await check();
  });
}

/** Checks the form again after a quiet moment of typing. */
function soon() {
  window.clearTimeout(timer);
  timer = window.setTimeout(() => run(check), QUIET_MS);
}

/** The core checks the form and, when it is clean, reads the first products through it. */
async function check() {
  if (!form || !target) return;
  const mine = ++asked;
  reading = true;
  renderPreview();
  try {
    const previewed = await invoke("attach_preview", { target, form });
    if (mine !== asked) return;
    lastCheck = previewed.check;
    // The statuses as counted now; every other field stays as the person typed it.
    if (form.orders && previewed.check.form.orders) form.orders.statuses = previewed.check.form.orders.statuses;
    readings = previewed.readings;
    readAt = clock(new Date());
  } finally {
    if (mine === asked) reading = false;
  }
  render();
}

/** @param {Event} event */
function edited(event) {
  const field = event.target;
  if (!form || !(field instanceof HTMLInputElement || field instanceof HTMLSelectElement)) return;
  const access = Object.hasOwn(TEXT, field.name) ? TEXT[field.name] : null;
  if (access) access[1](form, field.value);
  else if (field === initialFrom) {
    setInitial(form, initialFrom.value, input("stock_initial").value);
    shape();
  } else if (field === source) {
    changeSource(source.value);
    shape();
  } else return;
  soon();
}

/** Another in-flight source: its fields start empty (a RabbitMQ's URL as given above). @param {string} to */
function changeSource(to) {
  if (!form) return;
  if (to === "redis_stream") form.inflight = { source: "redis_stream", stream: "", group: "", product_field: "", order_id_field: null };
  else if (to === "rabbitmq") form.inflight = { source: "rabbitmq", url: target?.amqp_url ?? "", queue: "", product_field: null, management_url: null };
  else form.inflight = { source: "none" };
  for (const name of Object.keys(TEXT).filter((n) => n.startsWith("inflight_"))) input(name).value = TEXT[name][0](form) ?? "";
}

/**
 * A section the proposal lacks, added empty: the person fills it, the core's check marks what is
 * still needed.
 * @param {"stock" | "orders" | "redis"} which
 */
function addSection(which) {
  if (!form) return;
  if (which === "stock" && !form.stock) {
    form.stock = { table: "", product: "", remaining: "", reserved: null, initial: { from: "baseline" }, name: null };
  } else if (which === "orders" && !form.orders) {
    form.orders = {
      table: "", product: "", quantity_column: null, status: "", statuses: [],
      order_id: null, created: null, user: null, join: null,
    };
  } else if (which === "redis" && !form.redis) {
    form.redis = { stock: { form: "counter", template: "", clamp: false }, buyers: null };
  } else return;
  fill();
  renderStatuses();
  soon();
  input(which === "stock" ? "stock_table" : which === "orders" ? "orders_table" : "redis_stock").focus();
}

/** @param {SubmitEvent} event */
async function save(event) {
  event.preventDefault();
  if (!form || !target) return;
  const f = /** @param {string} name */ (name) => input(name).value;
  const environment = f("environment");
  const profile = {
    name: f("profileName"),
    environment: environment ? /** @type {EnvironmentKind} */ (environment) : null,
    role: /** @type {Role} */ (f("role")),
  };
  const saving = form;
  await run(async () => {
    window.clearTimeout(timer);
    const saved = await invoke("attach_save", { target: /** @type {AttachTarget} */ (target), form: saving, profile, reason: f("reason") });
    // The passwords leave the window with the save.
    for (const pw of ["mysqlPassword", "redisPassword", "statePassword"]) {
      /** @type {HTMLInputElement} */ (where.elements.namedItem(pw)).value = "";
    }
    ctx.showScreen("connections");
    showNotice(() => [
      t("attachSaved", { name: saved.profile, path: saved.adapter, n: saved.baselines.length }),
      passwordsSaid(saved.passwords),
    ].join(" ").trim());
  });
}

/** @param {boolean} open */
function toggle(open) {
  section.hidden = !open;
  opener.setAttribute("aria-expanded", String(open));
  if (open) /** @type {HTMLInputElement} */ (where.elements.namedItem("mysqlUrl")).focus();
}

/** @param {ScreenContext} context */
export function init(context) {
  ctx = context;
  opener.addEventListener("click", () => toggle(section.hidden));
  byId("attach-close").addEventListener("click", () => toggle(false));
  where.addEventListener("submit", propose);
  formEl.addEventListener("input", edited);
  formEl.addEventListener("change", (e) => {
    if (e.target === initialFrom || e.target === source) edited(e);
  });
  formEl.addEventListener("submit", save);
  byId("attach-add-status").addEventListener("click", addStatus);
  byId("attach-add-stock").addEventListener("click", () => addSection("stock"));
  byId("attach-add-orders").addEventListener("click", () => addSection("orders"));
  byId("attach-add-redis").addEventListener("click", () => addSection("redis"));
  onLanguageChange(render);
}
