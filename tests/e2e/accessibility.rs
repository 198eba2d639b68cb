//! Accessibility, the keyboard and both languages, over every screen of the window.
//!
//! - axe-core (pinned in package.json; `npm ci` installs it, scripts/typecheck-ui.sh runs that
//!   and `make test` runs it before the tests) is injected into the webview and run on every
//!   screen of the nav and on the panels and dialogs that open on them, in English and in
//!   Chinese: a violation of impact serious or critical fails, printed with its nodes.
//! - In Chinese, the words the window says (banner, nav, feedback, headings, table headers,
//!   labels, buttons, hints, dialogs, accessible names, the states and amounts of a case and
//!   the ledger check's progress) hold no English word: only names pass (ids, Redis, MySQL, a
//!   short list of abbreviations, profile, key and drill names, numbers, units). A word in
//!   capitals is English too (CLOSED, NORMAL, DRY_RUN, PENDING were). Errors are provoked on
//!   the way, from the window and from the core, so their templates are checked too.
//! - The switch to Chinese is made while a compensation case and a ledger check are open (from
//!   the English walk), on a screen other than the case's: what was already on screen is said
//!   again in Chinese, not left English until something redraws it.
//! - The window is then driven by keyboard alone.
//!
//! A new screen joins by its nav button (the walk goes over `#nav [data-screen]`); a panel or
//! dialog by a step that opens it here.

use std::collections::BTreeSet;

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::key::Key;
use serde_json::Value;

use super::*;

pub(super) fn axe_source() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../node_modules/axe-core/axe.min.js");
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("{}: {e}: run `npm ci` (scripts/typecheck-ui.sh does; `make test` runs it first)", path.display())
    })
}

/// Runs axe-core on the document; answers the serious and critical violations as JSON text.
/// The drill report is a sandboxed frame without scripts: axe cannot enter it (`iframes: false`).
const AXE_RUN: &str = r##"
const done = arguments[arguments.length - 1];
axe.run(document, { iframes: false, resultTypes: ["violations"] })
  .then((r) => done(JSON.stringify(r.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target.join(" "), why: n.failureSummary, html: n.html.slice(0, 200) })) })))))
  .catch((e) => done(JSON.stringify([{ id: "axe-error", impact: "critical", help: String(e), nodes: [] }])));
"##;

/// The words the window says to the user, where no data (product names, reasons typed) is:
/// each as [where, text]. What a server said verbatim (`.detail[lang=en]`) and what people
/// typed (`[data-user-text]`, reasons as recorded) are left out.
const SAID: &str = r##"
const visible = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
const out = [];
const text = (e) => {
  let s = e.innerText || "";
  // What a server said verbatim, and what people typed (reasons as recorded): not ours to say.
  for (const d of e.querySelectorAll('.detail[lang="en"], [data-user-text]')) s = s.replace(d.innerText, " ");
  return s;
};
const where = (e) => e.id ? "#" + e.id : e.tagName.toLowerCase() + (e.className ? "." + String(e.className).split(" ")[0] : "");
const screen = "main .screen:not([hidden])";
const selectors = ["#env-label", "#read-only", "#nav button", "#error", "#notice", "dialog[open]",
  `${screen} :is(h1, h2, th, label, button, p, li, dt, caption, b, td.status, td.outcome, td.action, td.role, td.problem, td.breaker,
    td.mode, #board-count, #selection-count, .health, #ledger-progress-text, #cp-inbox td, #cp-lines td)`];
for (const e of document.querySelectorAll(selectors.join(","))) {
  if (visible(e)) out.push([where(e), text(e)]);
}
const named = `#banner [aria-label], #nav[aria-label], #health [title], ${screen} :is([placeholder], [aria-label], [title], img[alt]), dialog[open] [aria-label]`;
for (const e of document.querySelectorAll(named)) {
  if (!visible(e)) continue;
  for (const a of ["placeholder", "aria-label", "title", "alt"]) {
    if (e.getAttribute(a)) out.push([where(e) + "@" + a, e.getAttribute(a)]);
  }
}
for (const s of document.querySelectorAll(`${screen} select`)) {
  if (visible(s) && s.selectedOptions[0]) out.push([where(s) + " option", s.selectedOptions[0].text]);
}
return out;
"##;

/// Words that are names in any language: products, protocols, units, keys of the keyboard,
/// and the abbreviations a Chinese engineer reads as they are (file formats the window writes,
/// ID as in 商品 ID).
const NAMES: &[&str] = &[
    "Redis",
    "MySQL",
    "MariaDB",
    "MySql",
    "MariaDb",
    "ms",
    "English",
    "Alt",
    "Shift",
    "Tab",
    "Space",
    "Enter",
    "Esc",
    "stockguard",
    "ID",
    "PNG",
    "CSV",
    "JSON",
];

/// The English words of `text`: runs of Latin letters that are not names. A token with a digit
/// (1016, p99, e2e-a11y), one letter (A, B, x), an environment variable's name
/// (STOCKGUARD_ENVIRONMENT, which is typed as it is), or among `names` passes; URLs and paths
/// are names as a whole. Capitals are no pass: CLOSED or DRY_RUN is an English word on screen.
fn english_words(text: &str, names: &BTreeSet<String>) -> Vec<String> {
    let mut found = Vec::new();
    for chunk in text.split_whitespace() {
        if chunk.contains("://") || chunk.starts_with('/') {
            continue;
        }
        for token in chunk.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')) {
            let token = token.trim_matches(|c: char| c == '.' || c == '-');
            let letters = token.chars().filter(char::is_ascii_alphabetic).count();
            if letters < 2
                || token.chars().any(|c| c.is_ascii_digit())
                || token.starts_with("STOCKGUARD_")
                || NAMES.contains(&token)
                || names.contains(token)
            {
                continue;
            }
            found.push(token.to_string());
        }
    }
    found
}

#[test]
fn a_word_in_capitals_is_english_but_names_abbreviations_and_codes_with_digits_are_not() {
    let names = BTreeSet::new();
    assert_eq!(
        english_words("已恢复 NORMAL（版本 3），结果 DRY_RUN、PENDING；PM", &names),
        ["NORMAL", "DRY_RUN", "PENDING", "PM"]
    );
    assert!(english_words("Redis 偏高 · 商品 ID 1016 · p99 12 ms · 导出 CSV · 设置 STOCKGUARD_CONFIG_DIR", &names)
        .is_empty());
}

/// What the screen says in Chinese that is English; recorded in `found`.
pub(super) async fn no_english(c: &Client, at: &str, names: &BTreeSet<String>, found: &mut Vec<String>) {
    let said = c.execute(SAID, vec![]).await.expect("the window's words can be read");
    let mut seen = 0;
    for pair in said.as_array().expect("pairs") {
        let (place, text) = (pair[0].as_str().unwrap_or(""), pair[1].as_str().unwrap_or(""));
        seen += 1;
        let words = english_words(text, names);
        if !words.is_empty() {
            found.push(format!("{at}: {place} says {text:?}: English {words:?}"));
        }
    }
    assert!(seen > 5, "{at}: the window said almost nothing ({seen} texts): the collector is broken");
}

/// Runs axe-core on the window as it is; records what it finds in `found`.
pub(super) async fn axe(c: &Client, source: &str, at: &str, found: &mut Vec<String>) {
    if c.execute("return typeof window.axe === 'object';", vec![]).await.unwrap() != json!(true) {
        c.execute(&format!("{source}\nreturn true;"), vec![]).await.expect("axe-core loads into the window");
    }
    let answer = c.execute_async(AXE_RUN, vec![]).await.unwrap_or_else(|e| panic!("{at}: axe.run: {e}"));
    let violations: Vec<Value> = serde_json::from_str(answer.as_str().unwrap_or("[]")).unwrap();
    for v in violations {
        let nodes: Vec<String> = v["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|n| {
                format!(
                    "    {} {}\n      {}",
                    n["target"],
                    n["html"],
                    n["why"].as_str().unwrap_or("").replace('\n', " ")
                )
            })
            .collect();
        found.push(format!("{at}: {} [{}] {}\n{}", v["id"], v["impact"], v["help"], nodes.join("\n")));
    }
}

/// Everything the walk finds, reported together at its end.
struct Checks {
    axe_js: String,
    names: BTreeSet<String>,
    lang: &'static str,
    violations: Vec<String>,
    english: Vec<String>,
}

impl Checks {
    /// axe-core on the window as it is; in Chinese, its words too.
    async fn look(&mut self, c: &Client, at: &str) {
        let at = format!("{at} ({})", self.lang);
        axe(c, &self.axe_js, &at, &mut self.violations).await;
        if self.lang == "zh" {
            no_english(c, &at, &self.names, &mut self.english).await;
        }
    }

    /// Only the words (an error said, before the window moves on).
    async fn words(&mut self, c: &Client, at: &str) {
        if self.lang == "zh" {
            no_english(c, &format!("{at} (zh)"), &self.names, &mut self.english).await;
        }
    }

    /// The dialog `css`, open: looked at, then closed by Escape.
    async fn dialog(&mut self, c: &Client, css: &str, at: &str) {
        if let Err(e) = c.wait().at_most(STEP).for_element(Locator::Css(&format!("{css}[open]"))).await {
            // What the window said instead (a refusal, a missing field), for the failure.
            let said = text_of(c, "#error").await.unwrap_or_default();
            let notice = text_of(c, "#notice").await.unwrap_or_default();
            if let Ok(png) = c.screenshot().await {
                let _ = std::fs::write("/tmp/stockguard-e2e-failure.png", png);
            }
            panic!("{at}: {e}; the window said {said:?} {notice:?} (window: /tmp/stockguard-e2e-failure.png)");
        }
        self.look(c, at).await;
        press(c, &[], char::from(Key::Escape)).await;
        assert!(!dialog_open(c, css).await, "{at}: Escape closes {css}");
    }
}

/// Presses keys as a person does (WebDriver actions): modifiers held around the key.
pub(super) async fn press(c: &Client, modifiers: &[Key], key: char) {
    let mut keys = KeyActions::new("keyboard".into());
    for m in modifiers {
        keys = keys.then(KeyAction::Down { value: char::from(*m) });
    }
    keys = keys.then(KeyAction::Down { value: key }).then(KeyAction::Up { value: key });
    for m in modifiers.iter().rev() {
        keys = keys.then(KeyAction::Up { value: char::from(*m) });
    }
    c.perform_actions(keys).await.unwrap_or_else(|e| panic!("pressing {key:?}: {e}"));
    tokio::time::sleep(Duration::from_millis(150)).await;
}

async fn clear(c: &Client, css: &str) {
    c.find(Locator::Css(css)).await.unwrap().clear().await.unwrap_or_else(|e| panic!("clear {css}: {e}"));
    c.execute("document.querySelector(arguments[0]).dispatchEvent(new Event('input'));", vec![json!(css)])
        .await
        .unwrap();
}

async fn is_hidden(c: &Client, css: &str) -> bool {
    let hidden = c
        .execute(
            "const e = document.querySelector(arguments[0]); return !e || e.hidden || !e.getClientRects().length;",
            vec![json!(css)],
        )
        .await
        .unwrap();
    hidden == json!(true)
}

async fn wait_shown(c: &Client, css: &str, what: &str) {
    let deadline = tokio::time::Instant::now() + STEP;
    while is_hidden(c, css).await {
        assert!(tokio::time::Instant::now() < deadline, "{what}: {css} stays hidden");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn active_element_is(c: &Client, css: &str) -> bool {
    c.execute("return document.activeElement === document.querySelector(arguments[0]);", vec![json!(css)])
        .await
        .unwrap()
        == json!(true)
}

/// The window by keyboard alone (what is focused first is set by script: a starting point).
async fn by_keyboard(c: &Client) {
    // Alt+L: the language (from Chinese to English).
    press(c, &[Key::Alt], 'l').await;
    wait_text(c, "#nav [data-screen=board]", "Alt+L switches the language", |t| t == "Live board").await;
    // Alt+4: the fourth screen of the nav.
    press(c, &[Key::Alt], '4').await;
    wait_attr(c, "#nav [data-screen=repair]", "aria-current", "page", "Alt+4 opens Reconcile").await;
    // `?`: the list, one line per screen among them, in the nav's order; Escape closes it.
    press(c, &[], '?').await;
    assert!(dialog_open(c, "#shortcuts-dialog").await, "? opens the shortcut list");
    let list = text_of(c, "#shortcuts").await.unwrap_or_default();
    assert!(list.contains("Alt+4") && list.contains("Reconcile & rewrite") && list.contains("Alt+8"), "{list}");
    assert!(
        list.contains("Alt+9") && list.contains("Open the screen Timeline"),
        "the ninth screen has the last digit: {list}"
    );
    press(c, &[], char::from(Key::Escape)).await;
    assert!(!dialog_open(c, "#shortcuts-dialog").await, "Escape closes the list");
    // Typing in a field: `?` and Alt+1 do nothing but type.
    c.execute("document.getElementById('rw-reason').focus();", vec![]).await.unwrap();
    press(c, &[], 'w').await;
    press(c, &[], '?').await;
    press(c, &[Key::Alt], '1').await;
    assert!(!dialog_open(c, "#shortcuts-dialog").await, "a ? typed in a field is typed");
    let typed = c.find(Locator::Css("#rw-reason")).await.unwrap().prop("value").await.unwrap().unwrap_or_default();
    assert!(typed.ends_with("w?"), "{typed:?}");
    wait_attr(c, "#nav [data-screen=repair]", "aria-current", "page", "Alt+1 in a field stays").await;
    // F1 opens the list too, from anywhere but a field.
    c.execute("document.activeElement.blur();", vec![]).await.unwrap();
    press(c, &[], char::from(Key::F1)).await;
    assert!(dialog_open(c, "#shortcuts-dialog").await, "F1 opens the shortcut list");
    press(c, &[], char::from(Key::Escape)).await;

    // The board: Space picks the focused row, arrows move, the chart opens by Enter and
    // closes by Escape.
    press(c, &[Key::Alt], '3').await;
    wait_attr(c, "#nav [data-screen=board]", "aria-current", "page", "Alt+3 opens the board").await;
    click(c, "#clear-selection").await;
    c.execute("document.querySelector('#products tbody tr[data-product-id] input.pick').focus();", vec![])
        .await
        .unwrap();
    press(c, &[], ' ').await;
    wait_text(c, "#selection-count", "Space picks the row", |t| t == "1 selected").await;
    let first = c.execute("return document.activeElement.closest('tr').dataset.productId;", vec![]).await.unwrap();
    press(c, &[], char::from(Key::Down)).await;
    let second = c.execute("return document.activeElement.closest('tr')?.dataset.productId;", vec![]).await.unwrap();
    assert!(second.is_string() && second != first, "ArrowDown moves to the next row: {first} then {second}");
    press(c, &[], ' ').await;
    wait_text(c, "#selection-count", "Space picks the second row", |t| t == "2 selected").await;
    c.execute("document.getElementById('show-chart').focus();", vec![]).await.unwrap();
    press(c, &[], char::from(Key::Enter)).await;
    wait_shown(c, "#chart-panel", "Enter on Chart selected opens the chart").await;
    c.execute("document.activeElement.blur();", vec![]).await.unwrap();
    press(c, &[], char::from(Key::Escape)).await;
    assert!(is_hidden(c, "#chart-panel").await, "Escape closes the chart panel");

    // Compensation: a case of the inbox opens by Enter on its row.
    press(c, &[Key::Alt], '7').await;
    wait_attr(c, "#nav [data-screen=compensation]", "aria-current", "page", "Alt+7 opens Compensation").await;
    c.wait().at_most(STEP).for_element(Locator::Css("#cp-inbox tbody tr[data-case-id]")).await.unwrap();
    c.execute("document.getElementById('cp-case').hidden = true; document.querySelector('#cp-inbox tbody tr[data-case-id]').focus();", vec![])
        .await
        .unwrap();
    assert!(active_element_is(c, "#cp-inbox tbody tr[data-case-id]").await, "an inbox row takes the focus");
    press(c, &[], char::from(Key::Enter)).await;
    wait_shown(c, "#cp-case", "Enter on a row opens its case").await;

    // And back to Chinese for what follows.
    press(c, &[Key::Alt], 'l').await;
    wait_text(c, "#nav [data-screen=board]", "Alt+L switches back", |t| t == "实时看板").await;
}

async fn dialog_open(c: &Client, css: &str) -> bool {
    c.execute("return document.querySelector(arguments[0]).open;", vec![json!(css)]).await.unwrap() == json!(true)
}

/// Waits until `#error` says something in the code `code` (from Rust or the window: "").
async fn wait_error(c: &Client, what: &str, code: &str) -> String {
    wait_attr(c, "#error", "data-code", code, what).await;
    wait_text(c, "#error", what, |t| !t.is_empty()).await
}

#[sqlx::test(migrations = "../migrations")]
async fn every_screen_passes_axe_speaks_chinese_throughout_and_works_by_keyboard(pool: MySqlPool) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let axe_js = axe_source();
    let redis = TestRedis::new("e2ea11y").await;
    // A product sold beyond its stock, so the compensation screen has a case to show.
    support::oversold::seed(&pool, 77, 10, 13, 1250, "L").await;
    let config = tempfile::tempdir().unwrap();
    let mysql_url = support::mysql_url_of(&pool).await;
    let mut store = ProfileStore::load(&config.path().join("profiles.toml")).unwrap();
    store.upsert("sandbox", profile(EnvironmentKind::Sandbox, &mysql_url, &redis)).unwrap();
    store.upsert("prod-a11y", profile(EnvironmentKind::Production, &mysql_url, &redis)).unwrap();
    // Nobody listens on port 9 of this machine: connecting fails, as a mistyped host does.
    store.upsert("broken", profile(EnvironmentKind::Sandbox, "mysql://root@127.0.0.1:9/none", &redis)).unwrap();
    store.save().unwrap();
    seed_sale(config.path());
    let png = config.path().join("export").join("drift-zh.png");

    // Names the Chinese window may show as they are.
    let mut names: BTreeSet<String> =
        // `global`: the degrade switch's scope, typed as it is to confirm the exit.
        ["sandbox", "prod-a11y", "broken", "root", "default", "global", redis.keys.prefix()]
            .iter()
            .map(|s| s.to_string())
            .collect();
    for entry in std::fs::read_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../drills")).unwrap() {
        let path = entry.unwrap().path();
        names.insert(path.file_stem().unwrap().to_string_lossy().to_string());
        names.extend(path.file_stem().unwrap().to_string_lossy().split('-').map(str::to_string));
    }

    let _one_window = one_window_at_a_time().await;
    let (driver, client) = open_app(config.path(), "e2e-a11y").await;
    let outcome = async {
        let c = &client;
        let mut checks = Checks { axe_js, names, lang: "en", violations: Vec::new(), english: Vec::new() };
        wait_text(c, "#products tbody tr[data-product-id] td.status", "the board fills", |t| !t.is_empty()).await;
        let screens: Vec<String> = serde_json::from_value(
            c.execute(
                "return [...document.querySelectorAll('#nav [data-screen]')].map((b) => b.dataset.screen);",
                vec![],
            )
            .await
            .unwrap(),
        )
        .unwrap();
        assert!(screens.len() >= 7, "{screens:?}");
        // The window keeps its language between runs, and open_app's switch to English may come
        // before the window listens: English now, for sure.
        if text_of(c, "#lang-toggle").await.as_deref() == Some("English") {
            click(c, "#lang-toggle").await;
        }
        // The notice of the start (no profile chosen: the sandbox), a typed notice of the core,
        // is said again in Chinese after the switch.
        wait_text(c, "#notice", "the start notice", |t| t.contains("sandbox profile")).await;
        click(c, "#lang-toggle").await;
        wait_text(c, "#notice", "the start notice in Chinese", |t| t.contains("沙箱")).await;
        // The board redraws its rows in the next frame.
        tokio::time::sleep(Duration::from_millis(500)).await;
        checks.lang = "zh";
        checks.words(c, "start").await;
        click(c, "#lang-toggle").await;

        for lang in ["en", "zh"] {
            checks.lang = lang;
            if lang == "zh" {
                // The English walk left a case open (compensation) and a ledger check shown
                // with its progress line (reconcile): the switch is made on the ledger's
                // screen, the case's hidden, so neither is on screen only because it was
                // drawn after the switch.
                click(c, "#nav [data-screen=repair]").await;
                wait_attr(c, "#nav [data-screen=repair]", "aria-current", "page", "the ledger's screen opens").await;
                wait_text(c, "#ledger-progress-text", "the ledger check's progress, in English", |t| {
                    t.contains("products checked")
                })
                .await;
                wait_text(c, "#ledger-summary", "the ledger check's summary, in English", |t| t.contains("checked in"))
                    .await;
                assert!(exists(c, "#cp-case:not([hidden])").await, "a case is open on the compensation screen");
                wait_text(c, "#cp-head", "the open case, in English", |t| t.starts_with("Case ")).await;
                click(c, "#lang-toggle").await;
                wait_text(c, "#nav [data-screen=board]", "the window in Chinese", |t| t == "实时看板").await;
                wait_text(c, "#ledger-progress-text", "the ledger's progress in Chinese", |t| t.contains("已检查"))
                    .await;
                wait_text(c, "#ledger-summary", "the ledger's summary in Chinese", |t| t.contains("共检查")).await;
                tokio::time::sleep(Duration::from_millis(500)).await;
                let html_lang = c.execute("return document.documentElement.lang;", vec![]).await.unwrap();
                assert_eq!(html_lang, json!("zh-CN"), "the page says its language");
                checks.look(c, "ledger check open at the switch").await;
                screenshot(c, "a11y-switch-ledger-zh").await;
                // The case, drawn in English while its screen was hidden, as it first shows.
                click(c, "#nav [data-screen=compensation]").await;
                wait_text(c, "#cp-head", "the open case in Chinese", |t| t.starts_with("案件")).await;
                checks.look(c, "case open at the switch").await;
                screenshot(c, "a11y-switch-case-zh").await;
            }
            // Every screen of the nav, as it first shows.
            for screen in &screens {
                click(c, &format!("#nav [data-screen={screen}]")).await;
                wait_attr(c, &format!("#nav [data-screen={screen}]"), "aria-current", "page", "the screen opens").await;
                tokio::time::sleep(Duration::from_millis(700)).await;
                checks.look(c, screen).await;
            }

            // The board: a product picked, its chart panel; an error of the window's own.
            click(c, "#nav [data-screen=board]").await;
            click(c, "#clear-selection").await;
            click(c, "#show-chart").await;
            wait_error(c, "nothing picked", "").await;
            checks.words(c, "board error").await;
            type_into(c, "#search", "1016").await;
            tick(c, "#products tbody tr[data-product-id=\"1016\"] input.pick").await;
            click(c, "#show-chart").await;
            wait_shown(c, "#chart-panel", "the chart panel opens").await;
            checks.look(c, "board chart").await;
            if lang == "zh" {
                // The PNG in Chinese: the core draws its labels with a CJK font (chart/font.rs).
                type_into(c, "#png-path", &png.display().to_string()).await;
                click(c, "#export-png").await;
                wait_text(c, "#notice", "the PNG is saved", |t| t.contains("drift-zh.png") && t.contains("图表")).await;
                assert_eq!(&std::fs::read(&png).unwrap()[..4], b"\x89PNG");
            }
            click(c, "#close-chart").await;
            clear(c, "#search").await;

            // Connections: a URL holding a password, refused by the core with its code.
            click(c, "#nav [data-screen=connections]").await;
            type_into(c, "#profile-form [name=name]", "leaky").await;
            choose(c, "#profile-form [name=environment]", "sandbox").await;
            type_into(c, "#profile-form [name=mysqlUrl]", "mysql://root:hunter2@db.internal:3306/sale").await;
            type_into(c, "#profile-form [name=redisUrl]", &redis.url).await;
            click(c, "#profile-save").await;
            let said = wait_error(c, "a password in a URL", "password_in_url").await;
            if lang == "zh" {
                assert!(said.contains("密码"), "{said}");
            } else {
                assert!(said.contains("must not hold a password"), "{said}");
            }
            checks.look(c, "connections error").await;
            click(c, "#profile-new").await;

            // Reconcile: the ledger's report; a rewrite without products, refused by the window.
            click(c, "#nav [data-screen=repair]").await;
            click(c, "#run-ledger").await;
            wait_text(c, "#ledger-summary", "the ledger check finishes", |t| !t.is_empty()).await;
            clear(c, "#rw-products").await;
            click(c, "#dry-run").await;
            wait_error(c, "no product to rewrite", "").await;
            checks.look(c, "repair ledger").await;

            // Drills: the halt dialog, closed by Escape.
            click(c, "#nav [data-screen=drills]").await;
            click(c, "#drill-halt").await;
            checks.dialog(c, "#halt-dialog", "halt dialog").await;

            // Compensation: a case opened for the oversold product; the core's refusal of a
            // product with nothing to compensate, and of one that does not exist.
            click(c, "#nav [data-screen=compensation]").await;
            type_into(c, "#cp-product", "1016").await;
            click(c, "#cp-open").await;
            wait_error(c, "nothing to compensate", "nothing_to_compensate").await;
            checks.words(c, "compensation refusal").await;
            type_into(c, "#cp-product", "999999").await;
            click(c, "#cp-open").await;
            wait_error(c, "no such product", "no_such_product").await;
            checks.words(c, "compensation unknown product").await;
            type_into(c, "#cp-product", "77").await;
            click(c, "#cp-open").await;
            wait_text(c, "#cp-head", "the case opens", |t| !t.is_empty()).await;
            checks.look(c, "compensation case").await;
            // Closing the case is a step of its own, asked in a dialog (left by Escape here).
            click(c, "#cp-close").await;
            checks.dialog(c, "#cp-close-dialog", "close case dialog").await;

            // The list of shortcuts.
            click(c, "#shortcuts-open").await;
            checks.dialog(c, "#shortcuts-dialog", "shortcuts").await;

            // The alerts panel (the seeded incidents fire) and the acknowledgement dialog.
            click(c, "#alerts-toggle").await;
            wait_shown(c, "#alerts-table", "the seeded incidents alert").await;
            checks.look(c, "alerts panel").await;
            click(c, "#alerts-table tbody tr.firing button.ack").await;
            checks.dialog(c, "#ack-dialog", "acknowledge dialog").await;
            click(c, "#alerts-close").await;
        }

        by_keyboard(c).await;

        // Production (in Chinese): the typed confirmations of a rewrite and of the exit.
        click(c, "#nav [data-screen=connections]").await;
        click(c, "#profiles tbody tr[data-profile=prod-a11y] button.connect").await;
        wait_banner(c, "banner production").await;
        click(c, "#nav [data-screen=repair]").await;
        type_into(c, "#rw-products", "1016").await;
        type_into(c, "#rw-reason", "e2e: accessibility").await;
        click(c, "#rewrite").await;
        checks.dialog(c, "#confirm-dialog", "rewrite confirmation").await;
        click(c, "#nav [data-screen=degrade]").await;
        type_into(c, "#dg-reason", "e2e: accessibility").await;
        click(c, "#dg-off").await;
        checks.dialog(c, "#exit-dialog", "exit confirmation").await;

        // A connection that fails: the core's error in Chinese, the server's words apart.
        click(c, "#nav [data-screen=connections]").await;
        click(c, "#profiles tbody tr[data-profile=broken] button.connect").await;
        let said = wait_error(c, "the broken profile fails", "mysql_unreachable").await;
        assert!(said.contains("无法连接 MySQL"), "{said}");
        checks.look(c, "connect error").await;
        screenshot(c, "a11y-error-zh").await;

        let Checks { violations, english, .. } = checks;
        assert!(
            violations.is_empty() && english.is_empty(),
            "axe-core: {} serious or critical violation(s):\n{}\n\nEnglish in the Chinese window ({}):\n{}",
            violations.len(),
            violations.join("\n"),
            english.len(),
            english.join("\n")
        );
    }
    .await;
    client.close().await.expect("session closes");
    drop(driver);
    outcome
}
