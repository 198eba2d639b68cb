// The error and notice lines under the navigation. Errors arrive typed: { kind, code, params,
// message }, said in the window's language by messages.js.
import { describeError } from "./messages.js";
import { onLanguageChange } from "./i18n.js";
import { byId } from "./dom.js";

const errorBox = byId("error");
const noticeBox = byId("notice");
/** What the boxes show, kept to be said again after a language switch. @type {unknown} */
let lastError = null;
/** @type {(() => string) | null} */
let lastNotice = null;
onLanguageChange(() => {
  if (lastError !== null) showError(lastError);
  if (lastNotice) showNotice(lastNotice);
});

/**
 * The nodes that say an error: its sentence, then what the server said verbatim, if anything,
 * marked as English (it is not ours to translate).
 * @param {unknown} err
 */
export function errorNodes(err) {
  const { text, detail } = describeError(err);
  /** @type {Node[]} */
  const nodes = [document.createTextNode(text)];
  if (detail) {
    const raw = document.createElement("span");
    raw.className = "detail";
    raw.lang = "en";
    raw.textContent = detail;
    nodes.push(document.createTextNode(" "), raw);
  }
  return nodes;
}

/**
 * Shows an error: a DesktopError from Rust ({ kind, code, params, message }), or whatever was
 * thrown.
 * @param {import("./types").DesktopError | Error | unknown} err
 */
export function showError(err) {
  lastError = err;
  const { kind, code } = describeError(err);
  errorBox.hidden = false;
  errorBox.dataset.kind = kind;
  errorBox.dataset.code = code ?? "";
  errorBox.replaceChildren(...errorNodes(err));
}

/**
 * Shows a notice; given as a function (of the language), it is said again after a switch.
 * @param {string | (() => string) | null} [text]
 */
export function showNotice(text) {
  lastNotice = typeof text === "function" ? text : null;
  const said = typeof text === "function" ? text() : text;
  noticeBox.hidden = !said;
  noticeBox.textContent = said ?? "";
}

export function clearFeedback() {
  lastError = null;
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
