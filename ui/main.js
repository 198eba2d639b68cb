// The console window: navigation between screens, the banner, the language switch. All data
// comes from Rust commands and events; nothing is computed here that the core knows.
import { t, toggleLanguage, applyTranslations, onLanguageChange } from "./i18n.js";
import { showError, clearFeedback, showNotice } from "./feedback.js";
import { noticeText } from "./messages.js";
import * as keyboard from "./keyboard.js";
import { connect, renderBanner, applyRights } from "./session.js";
import { byId, query } from "./dom.js";
import * as connections from "./features/connections.js";
import * as overview from "./features/overview.js";
import * as board from "./features/board.js";
import * as repair from "./features/repair.js";
import * as audit from "./features/audit.js";
import * as degrade from "./features/degrade.js";
import * as drills from "./features/drills.js";
import * as compensation from "./features/compensation.js";
import * as alerts from "./features/alerts.js";
import * as attach from "./features/attach.js";
import * as timeline from "./features/timeline.js";

// Screens by name, each with init() once and show() when opened; a new screen joins here and
// in the nav of index.html.
const SCREENS = { connections, overview, board, repair, degrade, drills, compensation, audit, timeline };

/** What every screen's init() gets. @typedef {{ showScreen: typeof showScreen }} ScreenContext */

/** @param {string} name one of SCREENS */
export function showScreen(name) {
  for (const [key, screen] of Object.entries(SCREENS)) {
    byId(`screen-${key}`).hidden = key !== name;
    const button = query(`#nav [data-screen="${key}"]`);
    button.classList.toggle("current", key === name);
    if (key === name) button.setAttribute("aria-current", "page");
    else button.removeAttribute("aria-current");
    if (key === name) screen.show();
  }
}

async function start() {
  applyTranslations();
  byId("lang-toggle").addEventListener("click", toggleLanguage);
  onLanguageChange(renderBanner);
  onLanguageChange(applyRights);
  for (const button of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("#nav [data-screen]"))) {
    button.addEventListener("click", () => {
      clearFeedback();
      showScreen(/** @type {string} */ (button.dataset.screen));
    });
  }
  for (const screen of Object.values(SCREENS)) screen.init({ showScreen });
  alerts.init({ showScreen });
  attach.init({ showScreen });
  keyboard.init();
  try {
    const info = await connect(null);
    if (info.notices.length) showNotice(() => info.notices.map(noticeText).join(" "));
    showScreen("overview");
  } catch (err) {
    renderBanner();
    showScreen("connections");
    showError(err);
  }
}

start();
