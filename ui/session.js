// The connection the window works on, the banner that shows it, and the products picked
// on the board (used by the chart and the rewrite).
import { invoke } from "./api.js";
import { t } from "./i18n.js";

/** @typedef {import("./types").ConnectionInfo} ConnectionInfo */

/** @type {ConnectionInfo | null} */
let info = null;
const connectListeners = [];

/** Product ids picked on the board. */
export const selection = new Set();

export function connection() {
  return info;
}

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
  const banner = document.getElementById("banner");
  if (!info) {
    banner.className = "banner unknown";
    document.getElementById("env-label").textContent = t("not_connected");
    document.getElementById("conn-detail").textContent = "";
    document.getElementById("read-only").hidden = true;
    return;
  }
  banner.className = `banner ${info.environment}`;
  document.getElementById("env-label").textContent = t(info.environment);
  const replica = info.has_replica ? ` · ${t("replica")}` : "";
  document.getElementById("conn-detail").textContent =
    `${info.profile ?? "env"} · ${info.mysql}${replica} · ${info.redis} · ${info.key_prefix} · ${t(info.role)}`;
  document.getElementById("read-only").hidden = !info.read_only;
}
