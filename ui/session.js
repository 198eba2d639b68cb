// The connection the window works on, the banner that shows it, and the products picked
// on the board (used by the chart and the rewrite).
import { invoke } from "./api.js";
import { t } from "./i18n.js";
import { byId } from "./dom.js";

/** @typedef {import("./types").ConnectionInfo} ConnectionInfo */

/** @type {ConnectionInfo | null} */
let info = null;
/** @type {Array<(info: ConnectionInfo) => void>} */
const connectListeners = [];

/** Product ids picked on the board. @type {Set<number>} */
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
  renderBanner();
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
  byId("conn-detail").textContent =
    `${info.profile ?? "env"} · ${info.mysql}${replica} · ${info.redis} · ${info.key_prefix} · ${t(info.role)}`;
  byId("read-only").hidden = !info.read_only;
}
