// The connection the window works on, the banner that shows it, and the products picked
// on the board (used by the chart and the rewrite).
import { invoke } from "./api.js";
import { t } from "./i18n.js";
import { byId } from "./dom.js";
import { reasonText } from "./messages.js";

/** @typedef {import("./types").ConnectionInfo} ConnectionInfo */
/** @typedef {import("./types").Rights} Rights */
/** @typedef {"read" | "rewrite" | "degrade" | "approve_compensation" | "execute_compensation" | "run_drills" | "acknowledge_alerts"} Capability */

/** @type {ConnectionInfo | null} */
let info = null;
/** What the servers let this connection do; null until they said. @type {Rights | null} */
let rights = null;
/** @type {Array<(info: ConnectionInfo) => void>} */
const connectListeners = [];

/** Product ids picked on the board (numbers, or text over an adapter keyed by text). @type {Set<import("./types").ProductId>} */
export const selection = new Set();

export function connection() {
  return info;
}

/**
 * Called after every connect, with the new connection.
 * @param {(info: ConnectionInfo) => void} fn
 */
export function onConnect(fn) {
  connectListeners.push(fn);
}

/** @param {string | null} profile */
export async function connect(profile) {
  info = await invoke("connect", { profile });
  selection.clear();
  rights = null;
  renderBanner();
  // The servers' own word on what this account may do. A failure to ask leaves every action
  // enabled: the servers still refuse what they refuse.
  rights = await invoke("connection_rights").catch(() => null);
  applyRights();
  for (const fn of connectListeners) fn(info);
  return info;
}

export function renderBanner() {
  const banner = byId("banner");
  if (!info) {
    banner.className = "banner unknown";
    byId("env-label").textContent = t("not_connected");
    byId("conn-detail").textContent = "";
    byId("read-only").hidden = true;
    return;
  }
  banner.className = `banner ${info.environment}`;
  byId("env-label").textContent = t(info.environment);
  const replica = info.has_replica ? ` · ${t("replica")}` : "";
  // A sale over its adapter is named by its adapter file, not by our key prefix.
  const sale = info.adapter_sale ? `${t("adapterSale")}: ${info.adapter_sale}` : info.key_prefix;
  byId("conn-detail").textContent =
    `${info.profile ?? "env"} · ${info.mysql}${replica} · ${info.redis} · ${sale} · ${t(info.role)}`;
  byId("read-only").hidden = !info.read_only;
}

/**
 * Whether the servers let this connection do `capability`, and if not, why. Unknown counts
 * as allowed (the server refuses at the time, and says why then).
 * @param {Capability} capability
 * @returns {{ ok: boolean, why: string }}
 */
export function may(capability) {
  const right = rights?.[capability];
  if (!right || right.allowed !== false) return { ok: true, why: "" };
  return { ok: false, why: right.reasons.map(reasonText).join("; ") };
}

/** The rights as last read (null until the servers said). */
export function currentRights() {
  return rights;
}

/**
 * Disables every button marked `data-right="<capability>"` that the servers refuse, with the
 * reason as its tooltip; screens that enable buttons themselves ask {@link may} too.
 */
export function applyRights() {
  for (const el of /** @type {NodeListOf<HTMLButtonElement>} */ (document.querySelectorAll("[data-right]"))) {
    const { ok, why } = may(/** @type {Capability} */ (el.dataset.right));
    el.disabled = !ok;
    el.title = why;
    el.classList.toggle("refused", !ok);
  }
  renderRights();
}

/** The Connections screen's list: each capability, allowed or refused with the reason. */
function renderRights() {
  const list = document.getElementById("rights");
  if (!list) return;
  /** @type {Capability[]} */
  const order = ["read", "rewrite", "degrade", "approve_compensation", "execute_compensation", "run_drills", "acknowledge_alerts"];
  list.replaceChildren(
    ...(rights
      ? order.map((c) => {
          const li = document.createElement("li");
          const right = /** @type {Rights} */ (rights)[c];
          li.dataset.capability = c;
          li.className = right.allowed === true ? "ok" : right.allowed === false ? "refused" : "unknown";
          const verdict = right.allowed === true ? t("allowed") : right.allowed === false ? t("refusedBy") : t("unknownRight");
          li.textContent = `${t(`cap_${c}`)}: ${verdict}${right.reasons.length ? ` (${right.reasons.map(reasonText).join("; ")})` : ""}`;
          return li;
        })
      : []),
  );
  const who = document.getElementById("rights-who");
  if (who) who.textContent = rights ? t("rightsWho", { mysql: rights.mysql_account, redis: rights.redis_user ?? "-" }) : "";
}
