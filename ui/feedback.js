// The error and notice lines under the navigation. Errors arrive typed: { kind, message }.
import { t } from "./i18n.js";
import { byId } from "./dom.js";

const errorBox = byId("error");
const noticeBox = byId("notice");

/**
 * Shows an error: a DesktopError from Rust ({ kind, message }), or whatever was thrown.
 * @param {import("./types").DesktopError | Error | unknown} err
 */
export function showError(err) {
  const kind = typeof err === "object" && err && "kind" in err && typeof err.kind === "string" ? err.kind : "error";
  const message = typeof err === "object" && err && "message" in err ? err.message : String(err);
  errorBox.hidden = false;
  errorBox.dataset.kind = kind;
  errorBox.textContent = message ? `${t(kind)}: ${message}` : t(kind);
}

/** @param {string | null} [text] */
export function showNotice(text) {
  noticeBox.hidden = !text;
  noticeBox.textContent = text ?? "";
}

export function clearFeedback() {
  errorBox.hidden = true;
  errorBox.textContent = "";
  showNotice("");
}

/**
 * A table cell with text (never HTML).
 * @param {string | number | boolean | null | undefined} text
 * @param {string} [className]
 */
export function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text === null || text === undefined ? "-" : String(text);
  if (className) td.className = className;
  return td;
}
