// The window by keyboard: Alt+1, Alt+2… open the screens in the order of the navigation (so a
// screen added to the nav of index.html gets its shortcut and its line in the list by itself),
// `?` or F1 opens the list of shortcuts, Alt+L switches the language, Escape closes the open
// panel (dialogs close on Escape by themselves). No shortcut fires while the user types in a
// field: a `?` typed into a reason is a question mark.
import { t, said, onLanguageChange } from "./i18n.js";
import { byId, query } from "./dom.js";

const dialog = /** @type {HTMLDialogElement} */ (byId("shortcuts-dialog"));

/** The nav's screen buttons, in order: Alt+<n> opens the n-th. */
function screenButtons() {
  return [.../** @type {NodeListOf<HTMLButtonElement>} */ (document.querySelectorAll("#nav [data-screen]"))];
}

/**
 * Whether a key pressed at `target` is typing (text fields, selects, editable content).
 * @param {EventTarget | null} target
 */
export function isTyping(target) {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable || target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) {
    return true;
  }
  return target instanceof HTMLInputElement && !["checkbox", "radio", "button", "submit", "reset"].includes(target.type);
}

/** Every shortcut, for the list: [keys, what they do]. */
function shortcuts() {
  /** @type {Array<[string, string]>} */
  const list = screenButtons()
    .slice(0, 9)
    .map((b, i) => [`Alt+${i + 1}`, t("kbScreen", { screen: said(/** @type {string} */ (b.dataset.i18n)) })]);
  list.push(
    ["?  /  F1", t("kbHelp")],
    ["Alt+L", t("kbLanguage")],
    ["Esc", t("kbEscape")],
    ["↑ ↓", t("kbRows")],
    ["Space", t("kbPick")],
    ["Enter", t("kbOpen")],
    ["Tab  /  Shift+Tab", t("kbTab")],
  );
  return list;
}

function renderList() {
  const rows = shortcuts().map(([keys, does]) => {
    const tr = document.createElement("tr");
    const k = document.createElement("td");
    const kbd = document.createElement("kbd");
    kbd.textContent = keys;
    k.append(kbd);
    const d = document.createElement("td");
    d.textContent = does;
    tr.append(k, d);
    return tr;
  });
  const note = document.createElement("tr");
  const td = document.createElement("td");
  td.colSpan = 2;
  td.className = "hint";
  td.textContent = t("kbTyping");
  note.append(td);
  query("#shortcuts tbody").replaceChildren(...rows, note);
}

export function openShortcuts() {
  renderList();
  if (!dialog.open) dialog.showModal();
}

/** Closes the open panel of the current screen: its visible `[data-escape]` button. */
function closePanel() {
  const current = document.querySelector("main > .screen:not([hidden])");
  const close = [...(current?.querySelectorAll("[data-escape]") ?? [])].find(
    (b) => b instanceof HTMLElement && b.offsetParent !== null,
  );
  if (close instanceof HTMLElement) close.click();
}

/** @param {KeyboardEvent} e */
function onKey(e) {
  if (e.defaultPrevented || isTyping(e.target)) return;
  // A modal dialog owns the keyboard (Escape closes it natively).
  if (document.querySelector("dialog[open]")) return;
  // By the key's place (Digit1) or, where a driver gives none, by its character.
  const digit = /^(?:Digit|Numpad)([1-9])$/.exec(e.code)?.[1] ?? (/^[1-9]$/.test(e.key) ? e.key : null);
  if (e.altKey && !e.ctrlKey && !e.metaKey && digit) {
    const button = screenButtons()[Number(digit) - 1];
    if (button) {
      e.preventDefault();
      button.click();
      button.focus();
    }
  } else if (e.altKey && !e.ctrlKey && !e.metaKey && (e.code === "KeyL" || e.key.toLowerCase() === "l")) {
    e.preventDefault();
    byId("lang-toggle").click();
  } else if (e.key === "F1" || (e.key === "?" && !e.altKey && !e.ctrlKey && !e.metaKey)) {
    e.preventDefault();
    openShortcuts();
  } else if (e.key === "Escape") {
    closePanel();
  }
}

export function init() {
  screenButtons().forEach((b, i) => i < 9 && b.setAttribute("aria-keyshortcuts", `Alt+${i + 1}`));
  document.addEventListener("keydown", onKey);
  byId("shortcuts-open").addEventListener("click", openShortcuts);
  onLanguageChange(() => dialog.open && renderList());
}
