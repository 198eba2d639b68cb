// Oversell compensation: the inbox of cases, one case with its orders, plan, totals and
// approval timeline, and the workflow's steps. Buttons a case's status does not allow are
// disabled with the reason; everything else is the database's to refuse (four eyes), and
// its refusal is shown as it is said.
import { invoke, listen } from "../api.js";
import { t, wordOf, money, onLanguageChange } from "../i18n.js";
import { showError, showNotice, clearFeedback, cell } from "../feedback.js";
import { onConnect, may } from "../session.js";
import { byId, query } from "../dom.js";

/** @typedef {import("../types").Case} Case */
/** @typedef {import("../types").CaseSummary} CaseSummary */
/** @typedef {import("../types").CaseStatus} CaseStatus */
/** @typedef {import("../types").Action} Action */
/** @typedef {import("../types").StepKind} StepKind */
/** @typedef {import("../types").Stepped} Stepped */

/**
 * A product id as typed: a whole number is a number, anything else text (a sale keyed by SKUs);
 * the core reads it as the sale's own kind. Never `Number()` of text.
 * @param {string} text
 * @returns {import("../types").ProductId}
 */
function typedId(text) {
  const id = text.trim();
  return /^\d+$/.test(id) ? Number(id) : id;
}

const inbox = query("#cp-inbox tbody");
const lines = query("#cp-lines tbody");
const panel = byId("cp-case");
const progress = byId("cp-progress");
/** @param {string} id */
const input = (id) => /** @type {HTMLInputElement} */ (byId(id));
/** @param {string} id */
const select = (id) => /** @type {HTMLSelectElement} */ (byId(id));
/** @param {string} id */
const button = (id) => /** @type {HTMLButtonElement} */ (byId(id));

/** @type {Case | null} */
let current = null;

/**
 * A case's steps as the database records them (compensation_steps.step).
 * @type {Record<string, import("../i18n.js").MessageKey>}
 */
const STEPS = {
  OPEN: "sk_OPEN", PROPOSE: "sk_PROPOSE", APPROVE: "sk_APPROVE", REJECT: "sk_REJECT",
  EXECUTE: "sk_EXECUTE", EXECUTED: "sk_EXECUTED", CLOSE: "sk_CLOSE", NOTE: "sk_NOTE",
};

/** @param {CaseSummary} c */
function inboxRow(c) {
  const tr = document.createElement("tr");
  tr.dataset.caseId = String(c.id);
  tr.className = `case-${c.status}`;
  tr.append(
    cell(c.id, "num"),
    cell(c.product_id, "num"),
    cell(t(`st_${c.status}`), "status"),
    cell(c.lines, "num"),
    cell(money(c.total_cents), "num"),
    cell(t("cpAgeMin", { n: Math.floor(c.age_s / 60) }), "num"),
    cell(c.maker),
  );
  const open = () => {
    clearFeedback();
    openCase(c.id);
  };
  tr.addEventListener("click", open);
  // By keyboard too: the row is a tab stop, Enter or Space opens its case.
  tr.tabIndex = 0;
  tr.setAttribute("aria-label", t("openCase", { id: c.id }));
  tr.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      open();
    }
  });
  return tr;
}

async function loadInbox() {
  try {
    const status = /** @type {CaseStatus | null} */ (select("cp-status").value || null);
    const cases = await invoke("compensation_list", { status });
    inbox.replaceChildren(...cases.map(inboxRow));
  } catch (err) {
    showError(err);
  }
}

/** Shows case `id` (what the last step said stays shown). @param {number} id */
async function openCase(id) {
  try {
    current = await invoke("compensation_show", { case_id: id });
    render();
  } catch (err) {
    showError(err);
  }
}

/**
 * Enables `id` when the case's status allows it and the servers let this account do it;
 * otherwise disables it and says why in its tooltip.
 * @param {string} id @param {boolean} allowed @param {import("../i18n.js").MessageKey} why
 */
function allow(id, allowed, why) {
  const b = button(id);
  const right = may(/** @type {import("../session.js").Capability} */ (b.dataset.right ?? "read"));
  b.disabled = !allowed || !right.ok;
  b.title = !right.ok ? right.why : allowed ? "" : t(why);
}

function render() {
  const c = current;
  panel.hidden = !c;
  if (!c) return;
  byId("cp-head").textContent = t("cpHead", {
    id: c.id,
    product: c.product_id,
    status: t(`st_${c.status}`),
    oversold: c.oversold_units,
    withdrawn: c.withdrawn_units,
    total: money(c.total_cents),
  });
  byId("cp-meta").textContent = t("cpMeta", {
    by: c.opened_by,
    at: c.opened_at,
    maker: c.maker ?? "-",
    n: c.approvals.length,
    needed: c.approvals_needed,
    who: c.approvals.length ? `(${c.approvals.join(", ")})` : "",
  });
  // Why two checkers, once a proposal needs them: the threshold and the total that crossed it.
  if (c.approvals_needed >= 2 && c.maker) {
    byId("cp-meta").append(
      " · ",
      c.two_checkers_above_cents === null
        ? t("cpTwoNoRow")
        : t("cpTwoAbove", { total: money(c.total_cents), above: money(c.two_checkers_above_cents) }),
    );
  }
  lines.replaceChildren(
    ...c.lines.map((l) => {
      const tr = document.createElement("tr");
      tr.dataset.orderNo = l.order_no;
      const order = cell(l.order_no);
      if (l.read_by) {
        // Over an adapter: a colleague's row the opening matched; the checker asks them.
        order.append(" ⚠");
        order.title = t("cpReadBy", { who: l.read_by });
        order.dataset.readBy = l.read_by;
      }
      tr.append(
        order,
        cell(l.user_id, "num"),
        cell(l.qty, "num"),
        cell(l.accepted_at),
        cell(money(l.price_cents), "num"),
        // Why this order: its first unit's place among the units sold, beyond the stock on sale.
        cell(
          l.sold_from !== null && c.initial_stock !== null
            ? `${t(`rs_${l.reason}`)} · ${t("cpSoldAs", { unit: l.sold_from, initial: c.initial_stock })}`
            : t(`rs_${l.reason}`),
        ),
        cell(l.action ? t(`act_${l.action}`) : "-"),
        cell(money(l.amount_cents), "num"),
        cell(l.outcome ? t(`lo_${l.outcome}`) : "", "outcome"),
      );
      return tr;
    }),
  );
  /** @type {Map<Action, { n: number; total: number }>} */
  const per = new Map();
  for (const l of c.lines) {
    if (!l.action) continue;
    const sum = per.get(l.action) ?? { n: 0, total: 0 };
    per.set(l.action, { n: sum.n + 1, total: sum.total + l.amount_cents });
  }
  byId("cp-totals").textContent = [...per]
    .map(([action, s]) => t("cpPerAction", { action: t(`act_${action}`), n: s.n, total: money(s.total) }))
    .join(" · ");
  byId("cp-timeline").replaceChildren(
    ...c.steps.map((s) => {
      const li = document.createElement("li");
      li.textContent = `${s.at} ${wordOf(STEPS, s.step)} · ${s.actor}`;
      if (s.step === "OPEN") {
        // The core notes how many orders it found: said here in the window's language.
        li.append(" · ", t("cpOpenedWith", { n: c.lines.length }));
      } else if (s.reason) {
        // As recorded: what a person typed when the step was taken.
        const reason = document.createElement("span");
        reason.dataset.userText = "";
        reason.textContent = s.reason;
        li.append(" · ", reason);
      }
      return li;
    }),
  );
  const draft = c.status === "DRAFT";
  allow("cp-save-plan", draft, "cpOnlyDraft");
  allow("cp-propose", draft, "cpOnlyDraft");
  allow("cp-approve", c.status === "PROPOSED", "cpOnlyProposed");
  allow("cp-reject", c.status === "PROPOSED", "cpOnlyProposed");
  allow("cp-execute", c.status === "APPROVED" || c.status === "EXECUTING", "cpOnlyApproved");
  allow("cp-close", draft || c.status === "EXECUTED", "cpOnlyClosable");
}

async function savePlan() {
  if (!current) return;
  const coupon = input("cp-coupon").value;
  await invoke("compensation_plan", {
    case_id: current.id,
    oversold: /** @type {Action | null} */ (select("cp-oversold").value || null),
    withdrawn: /** @type {Action | null} */ (select("cp-withdrawn").value || null),
    coupon_cents: coupon ? Number(coupon) : null,
    note: input("cp-note").value.trim(),
  });
}

/** @param {StepKind} step @param {string} reason */
async function step(step, reason) {
  if (!current) return;
  const id = current.id;
  /** @type {Stepped} */
  const s = await invoke("compensation_step", { case_id: id, step, reason });
  showNotice(() => t("cpStepped", { id, status: t(`st_${s.status}`), actor: s.actor, n: s.approvals, needed: s.approvals_needed }));
}

/**
 * Closing a case is a workflow step, not a panel's close: a dialog says what it does to this
 * case and takes the reason. Resolves to the reason, or null when cancelled.
 * @returns {Promise<string | null>}
 */
function askCloseReason() {
  const dialog = /** @type {HTMLDialogElement} */ (byId("cp-close-dialog"));
  const reason = input("cp-close-reason");
  const go = /** @type {HTMLButtonElement} */ (byId("cp-close-go"));
  if (!current) return Promise.resolve(null);
  const { id, status } = current;
  byId("cp-close-title").textContent = t("cpCloseTitle", { id });
  byId("cp-close-hint").textContent = t(status === "DRAFT" ? "cpCloseDraftHint" : "cpCloseExecutedHint");
  reason.value = input("cp-reason").value.trim();
  go.disabled = !reason.value.trim();
  reason.oninput = () => (go.disabled = !reason.value.trim());
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "confirm" ? reason.value.trim() : null), {
      once: true,
    });
    dialog.returnValue = "";
    dialog.showModal();
    reason.focus();
  });
}

/** Runs `action`, then reloads the case and the inbox; any refusal is shown as said. @param {() => Promise<void>} action */
async function act(action) {
  clearFeedback();
  try {
    await action();
  } catch (err) {
    showError(err);
  }
  if (current) await openCase(current.id).catch(showError);
  await loadInbox();
}

export function init() {
  byId("cp-refresh").addEventListener("click", () => act(async () => {}));
  select("cp-status").addEventListener("change", loadInbox);
  byId("cp-open").addEventListener("click", () =>
    act(async () => {
      const opened = await invoke("compensation_open", { product_id: typedId(input("cp-product").value) });
      showNotice(() => t("cpOpened", { id: opened.case_id, n: opened.lines_added }) + (opened.waiting ? ` · ${t("cpWaiting", { n: opened.waiting })}` : ""));
      await openCase(opened.case_id);
    }),
  );
  byId("cp-save-plan").addEventListener("click", () =>
    act(async () => {
      await savePlan();
      showNotice(() => t("cpPlanSaved"));
    }),
  );
  byId("cp-propose").addEventListener("click", () =>
    act(async () => {
      if (select("cp-oversold").value || select("cp-withdrawn").value) await savePlan();
      await step("PROPOSE", input("cp-note").value.trim());
    }),
  );
  byId("cp-approve").addEventListener("click", () => act(() => step("APPROVE", input("cp-reason").value.trim())));
  byId("cp-reject").addEventListener("click", () => act(() => step("REJECT", input("cp-reason").value.trim())));
  byId("cp-close").addEventListener("click", async () => {
    const reason = await askCloseReason();
    if (reason !== null) await act(() => step("CLOSE", reason));
  });
  byId("cp-execute").addEventListener("click", () =>
    act(async () => {
      if (!current) return;
      const ran = await invoke("compensation_execute", { case_id: current.id, confirm: Number(input("cp-confirm").value) });
      /** @param {string} kind */
      const count = (kind) => ran.lines.filter((l) => l.result === kind).length;
      showNotice(() => t("cpExecuted", { done: count("done"), skipped: count("skipped"), already: count("already_done"), unknown: count("unknown") }));
    }),
  );
  byId("cp-export").addEventListener("click", () =>
    act(async () => {
      if (!current) return;
      const path = await invoke("compensation_export", { case_id: current.id, path: null });
      showNotice(() => t("cpSaved", { path }));
    }),
  );
  listen("compensation-progress", (p) => {
    progress.textContent = t("cpProgress", { done: p.done, total: p.total, order: p.order_no });
  });
  onConnect(() => {
    current = null;
    panel.hidden = true;
    inbox.replaceChildren();
  });
  // The open case is redrawn whether or not its screen shows: a switch made elsewhere would
  // otherwise leave it in the old language until the next step redraws it.
  onLanguageChange(() => {
    render();
    if (!byId("screen-compensation").hidden) loadInbox();
  });
}

export function show() {
  loadInbox();
}
