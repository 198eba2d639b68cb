// The error and notice lines under the navigation. Errors arrive typed: { kind, message }.
import { t } from "./i18n.js";

const errorBox = document.getElementById("error");
const noticeBox = document.getElementById("notice");

/** @param {import("./types").DesktopError | Error | string} err */
export function showError(err) {
  const kind = typeof err === "object" && err && "kind" in err ? err.kind : "error";
  const message = typeof err === "object" && err && "message" in err ? err.message : String(err);
  errorBox.hidden = false;
  errorBox.dataset.kind = kind;
  errorBox.textContent = message ? `${t(kind)}: ${message}` : t(kind);
}

export function showNotice(text) {
  noticeBox.hidden = !text;
  noticeBox.textContent = text ?? "";
}

export function clearFeedback() {
  errorBox.hidden = true;
  errorBox.textContent = "";
  showNotice("");
}

/** A table cell with text (never HTML). */
export function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text === null || text === undefined ? "-" : String(text);
  if (className) td.className = className;
  return td;
}
