//! End-to-end: the real desktop app, driven through tauri-driver and WebKitWebDriver, against
//! a freshly seeded sandbox sale with an engine running. Needs a display (`make test` runs it
//! under Xvfb) and `tauri-driver` (`make deps` installs it); without either it fails, saying so.
//!
//! It walks the on-call engineer's path and photographs every screen into
//! `target/screenshots/`; with `STOCKGUARD_WRITE_SCREENSHOTS=1` (`make screenshots`) into
//! `docs/screenshots/` instead (committed, shown in the README), so a test run leaves a clean
//! checkout clean.

#[path = "../support/mod.rs"]
mod support;

/// The adapter tests' own sales (issue 28), for the wizard that attaches one.
#[path = "../adapters/sales/mod.rs"]
#[allow(unused_imports)]
mod sales;

mod accessibility;
mod adapter_board;
mod alerts;
mod app;
mod attach;
mod desktop_bus;
mod keychain;
mod overview;
mod page_death;
mod timeline;

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;
use sqlx::MySqlPool;
use stockguard_core::profile::{EnvironmentKind, Profile, ProfileStore, Role};
use support::TestRedis;

/// tauri-driver, stopped with SIGTERM on drop: only then does it stop WebKitWebDriver, whose
/// open pipes would otherwise keep the test run hanging. It is stopped at once, too, when the
/// app it started is gone (see `app`).
struct Driver {
    child: Child,
    port: u16,
    app: Arc<app::AppProcess>,
    stop_watchdog: Arc<AtomicBool>,
    watchdog: Option<std::thread::JoinHandle<()>>,
}

impl Driver {
    /// Starts tauri-driver for `app` (the session's application is `app.launcher`).
    fn start(env: &[(&str, String)], app: Arc<app::AppProcess>) -> Self {
        let binary = support::which("tauri-driver").unwrap_or_else(|| {
            panic!("tauri-driver is not installed: run `make deps` (cargo install tauri-driver --locked)")
        });
        assert!(
            std::env::var_os("DISPLAY").is_some(),
            "no DISPLAY: the end-to-end test drives a real window; run it under Xvfb (`make test` does)"
        );
        let port = support::free_port();
        let native_port = support::free_port();
        let mut cmd = Command::new(binary);
        cmd.args(["--port", &port.to_string(), "--native-port", &native_port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        if let Some(native) = support::which("WebKitWebDriver") {
            cmd.arg("--native-driver").arg(native);
        }
        // The app must connect through the profiles of this test only: overrides that the test
        // run itself uses (`make test` exports them) would replace every profile's URLs.
        for k in support::PROFILE_OVERRIDES {
            cmd.env_remove(k);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("tauri-driver starts");
        app::watch(&app);
        let stop_watchdog = Arc::new(AtomicBool::new(false));
        let watchdog = Some(app::spawn_watchdog(app.clone(), child.id(), stop_watchdog.clone()));
        Self { child, port, app, stop_watchdog, watchdog }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        self.stop_watchdog.store(true, Ordering::Relaxed);
        if let Some(watchdog) = self.watchdog.take() {
            let _ = watchdog.join();
        }
        app::unwatch(&self.app);
        // The app's stderr is kept in a file; a failed scenario shows it.
        if std::thread::panicking() {
            eprintln!("the app's last words on stderr:\n{}", self.app.last_words());
        }
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let _ = self.child.wait();
    }
}

/// The `stockguard` binary, built beside this test (`make test` builds it first), run with the
/// profiles of `config_dir` and none of the overrides `make test` exports.
fn stockguard(config_dir: &std::path::Path, args: &[&str]) -> Command {
    let exe = std::env::current_exe().expect("the test knows where it is");
    // target/debug/deps/e2e-* -> target/debug/stockguard
    let binary = exe.parent().and_then(|deps| deps.parent()).map(|dir| dir.join("stockguard")).unwrap();
    assert!(binary.is_file(), "{} is not built: run `cargo build -p stockguard` (make test does)", binary.display());
    let mut cmd = Command::new(binary);
    cmd.arg("--profile").arg("sandbox").args(args).env("STOCKGUARD_CONFIG_DIR", config_dir);
    for k in support::PROFILE_OVERRIDES {
        cmd.env_remove(k);
    }
    cmd
}

/// `stockguard engine serve` on the sandbox profile, stopped (Ctrl-C, then waited for) on drop.
struct Engine(Child);

impl Engine {
    fn start(config_dir: &std::path::Path) -> Self {
        let port = support::free_port();
        let child = stockguard(config_dir, &["engine", "serve", "--listen", &format!("127.0.0.1:{port}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("stockguard engine serve starts");
        let engine = Self(child);
        let deadline = std::time::Instant::now() + STEP;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < deadline, "the engine did not listen on {port}");
            std::thread::sleep(Duration::from_millis(100));
        }
        engine
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.0.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
        let _ = self.0.wait();
    }
}

/// How long any one step may take to show up in the window (the board ticks every second).
const STEP: Duration = Duration::from_secs(30);

/// The seeded REDIS_HIGH product.
const REDIS_HIGH_PRODUCT: u64 = 1016;

fn screenshot_path(name: &str) -> std::path::PathBuf {
    let folder = if std::env::var_os("STOCKGUARD_WRITE_SCREENSHOTS").is_some_and(|v| v == "1") {
        "../docs/screenshots"
    } else {
        "../target/screenshots"
    };
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(folder).join(format!("{name}.png"))
}

async fn screenshot(client: &Client, name: &str) {
    let png = client.screenshot().await.expect("the window can be photographed");
    let path = screenshot_path(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, png).unwrap();
}

/// The text the user sees in the first element matching `css`, or `None` while there is none.
async fn text_of(client: &Client, css: &str) -> Option<String> {
    read_text(client, css).await.ok().flatten()
}

/// The first matching element's text (`None`: no such element), or why it could not be read.
async fn read_text(client: &Client, css: &str) -> Result<Option<String>, String> {
    let value = client
        .execute(
            "const e = document.querySelector(arguments[0]); return e ? e.innerText.trim() : null;",
            vec![json!(css)],
        )
        .await
        .map_err(|e| e.to_string())?;
    Ok(value.as_str().map(str::to_string))
}

/// Waits until the first element matching `css` has text satisfying `ok`; returns the text.
async fn wait_text(client: &Client, css: &str, what: &str, ok: impl Fn(&str) -> bool) -> String {
    wait_text_within(client, css, what, STEP, ok).await
}

/// [`wait_text`] with a time of its own, for what takes longer than a step (a whole drill).
async fn wait_text_within(
    client: &Client,
    css: &str,
    what: &str,
    within: Duration,
    ok: impl Fn(&str) -> bool,
) -> String {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        app::check_current();
        let read = read_text(client, css).await;
        if let Some(t) = read.as_ref().ok().and_then(|t| t.as_deref()).filter(|t| ok(t)) {
            return t.to_string();
        }
        // A read that failed says why in the failure, not as "nothing".
        let text = match &read {
            Ok(text) => format!("{text:?}"),
            Err(why) => format!("nothing readable ({why})"),
        };
        if tokio::time::Instant::now() >= deadline {
            // What the window looked like, for whoever reads the failure.
            let shot = std::env::temp_dir().join("stockguard-e2e-failure.png");
            if let Ok(png) = client.screenshot().await {
                let _ = std::fs::write(&shot, png);
            }
            panic!("{what}: `{css}` shows {text} (window: {})", shot.display());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Waits until the first element matching `css` has `attribute` = `value`.
async fn wait_attr(client: &Client, css: &str, attribute: &str, value: &str, what: &str) {
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        app::check_current();
        let now = match client.find(Locator::Css(css)).await {
            Ok(element) => element.attr(attribute).await.ok().flatten(),
            Err(_) => None,
        };
        if now.as_deref() == Some(value) {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "{what}: `{css}` has {attribute}={now:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Clicks the element `css` names. The live board replaces its rows on every tick, so the
/// element found may be gone by the time it is clicked: then it is found again.
async fn click(client: &Client, css: &str) {
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        app::check_current();
        let clicked = match client.wait().at_most(STEP).for_element(Locator::Css(css)).await {
            Ok(element) => element.click().await.map(|_| ()),
            Err(e) => Err(e),
        };
        match clicked {
            Ok(()) => return,
            Err(e) if e.is_stale_element_reference() && tokio::time::Instant::now() < deadline => {}
            Err(e) => {
                if let Ok(png) = client.screenshot().await {
                    let _ = std::fs::write("/tmp/stockguard-e2e-failure.png", png);
                }
                panic!("click {css}: {e:?} (window: /tmp/stockguard-e2e-failure.png)")
            }
        }
    }
}

/// Ticks the checkbox `css` names, and waits until it is ticked. A click is a toggle, and on
/// the live board a click may land while its row is being replaced (then `click` finds it
/// again and clicks once more, which could untick it): so this clicks only a box seen unticked.
async fn tick(client: &Client, css: &str) {
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        app::check_current();
        let ticked = match client.find(Locator::Css(css)).await {
            Ok(element) => element.is_selected().await.unwrap_or(false),
            Err(_) => false,
        };
        if ticked {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "{css} never got ticked");
        click(client, css).await;
    }
}

/// Types `text` into the field `css` names, in place of what it held, and waits until the
/// field holds exactly that: a field not yet interactable (its screen still being drawn, a
/// dialog opening) or redrawn under the keys is found and typed into again.
async fn type_into(client: &Client, css: &str, text: &str) {
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        app::check_current();
        let input =
            client.wait().at_most(STEP).for_element(Locator::Css(css)).await.unwrap_or_else(|e| panic!("{css}: {e}"));
        let typed = async {
            input.clear().await?;
            input.send_keys(text).await?;
            input.prop("value").await
        }
        .await;
        match typed {
            Ok(Some(value)) if value == text => return,
            Ok(value) => assert!(tokio::time::Instant::now() < deadline, "{css} holds {value:?}, not {text:?}"),
            Err(e) if tokio::time::Instant::now() < deadline => {
                eprintln!("typing into {css}: {e:?}; trying again");
            }
            // WebKitWebDriver's refusals can come without a message: the kind says which, and
            // whether the field was shown says whether its screen was open.
            Err(e) => panic!("typing into {css}: {e:?} (shown: {:?})", input.is_displayed().await),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Sets a `<select>` the way a user's pick does: value, then a change event.
async fn choose(client: &Client, css: &str, value: &str) {
    client
        .execute(
            "const s = document.querySelector(arguments[0]); s.value = arguments[1]; s.dispatchEvent(new Event('change'));",
            vec![json!(css), json!(value)],
        )
        .await
        .unwrap_or_else(|e| panic!("choose {value} in {css}: {e}"));
}

async fn banner_class(client: &Client) -> String {
    client.find(Locator::Css("#banner")).await.unwrap().attr("class").await.unwrap().unwrap_or_default()
}

async fn wait_banner(client: &Client, class: &str) {
    let deadline = tokio::time::Instant::now() + STEP;
    while banner_class(client).await != class {
        app::check_current();
        assert!(tokio::time::Instant::now() < deadline, "banner never became `{class}`");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn profile(environment: EnvironmentKind, mysql_url: &str, redis: &TestRedis) -> Profile {
    Profile {
        environment,
        mysql_url: mysql_url.to_string(),
        mysql_replica_url: None,
        redis_url: redis.url.clone(),
        key_prefix: redis.keys.prefix().to_string(),
        role: Role::Oncall,
        read_only: false,
        thresholds: Default::default(),
        adapter: None,
        state_url: None,
        tls: Default::default(),
        ssh_tunnel: None,
        secrets: Default::default(),
        passwords_from_env: Default::default(),
    }
}

/// Seeds the demo sale with the profiles of `config_dir`, by the `stockguard` binary as `make
/// demo` does (the desktop crate does not link the engine).
fn seed_sale(config_dir: &std::path::Path) {
    let seeded = stockguard(config_dir, &["sandbox", "seed"]).output().expect("stockguard sandbox seed runs");
    assert!(seeded.status.success(), "seed: {}", String::from_utf8_lossy(&seeded.stderr));
}

/// A config folder with the one profile a fresh `sandbox up` leaves, `sandbox`, on this test's
/// database and Redis prefix, and the demo sale seeded there; and the database's URL.
async fn seeded_sandbox(pool: &MySqlPool, redis: &TestRedis) -> (tempfile::TempDir, String) {
    let (config, mysql_url) = sandbox_profile(pool, redis).await;
    seed_sale(config.path());
    (config, mysql_url)
}

/// A config folder whose `sandbox` profile reaches `pool`'s database and `redis`, and that
/// database's URL; nothing seeded.
async fn sandbox_profile(pool: &MySqlPool, redis: &TestRedis) -> (tempfile::TempDir, String) {
    let config = tempfile::tempdir().unwrap();
    let mysql_url = support::mysql_url_of(pool).await;
    let mut store = ProfileStore::load(&config.path().join("profiles.toml")).unwrap();
    store.upsert("sandbox", profile(EnvironmentKind::Sandbox, &mysql_url, redis)).unwrap();
    store.save().unwrap();
    (config, mysql_url)
}

/// Waits until the app's log file (in `config_dir/logs`, see `open_app`) holds a line with
/// every one of `words`.
async fn wait_log_line(config_dir: &std::path::Path, words: &[&str]) {
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        app::check_current();
        let mut text = String::new();
        for entry in std::fs::read_dir(config_dir.join("logs")).into_iter().flatten().flatten() {
            text.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
        if text.lines().any(|line| words.iter().all(|w| line.contains(w))) {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "the app's log has no line with {words:?}:\n{text}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The end-to-end tests share one display and one webview profile: one window at a time.
async fn one_window_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    // A tokio mutex: each test runs its own runtime, and a failed test does not poison it.
    static WINDOW: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    WINDOW.lock().await
}

/// Starts the app through tauri-driver with the profiles of `config_dir`, acting as `actor`.
async fn open_app(config_dir: &std::path::Path, actor: &str) -> (Driver, Client) {
    open_app_with(config_dir, actor, &[]).await
}

/// [`open_app`] with more environment for the app (a desktop bus, say). A start that fails
/// (the app gone before its window said its first words, or no window within a minute) is
/// tried once more; a second failure fails the scenario with both starts' words.
async fn open_app_with(config_dir: &std::path::Path, actor: &str, env: &[(&str, String)]) -> (Driver, Client) {
    app::install_panic_note();
    let mut vars = vec![
        ("STOCKGUARD_CONFIG_DIR", config_dir.display().to_string()),
        ("STOCKGUARD_ACTOR", actor.to_string()),
        ("STOCKGUARD_LOG_DIR", config_dir.join("logs").display().to_string()),
    ];
    vars.extend(env.iter().cloned());
    let binary = std::path::Path::new(env!("CARGO_BIN_EXE_stockguard-desktop"));
    start_app_twice(binary, &vars).await.unwrap_or_else(|why| panic!("{why}"))
}

/// [`start_app`], and once more if that failed; `Err` says why each start failed.
async fn start_app_twice(binary: &std::path::Path, vars: &[(&str, String)]) -> Result<(Driver, Client), String> {
    match start_app(binary, vars).await {
        Ok(started) => Ok(started),
        Err(first) => {
            eprintln!("the app did not start; trying once more. {first}");
            start_app(binary, vars)
                .await
                .map_err(|again| format!("the app did not start, twice.\nThe first time: {first}\nThen: {again}"))
        }
    }
}

/// How long the app may take to show its window's first words.
const START: Duration = Duration::from_secs(60);

/// Starts `binary` through tauri-driver and waits until its window said its first words, then
/// makes sure it speaks English.
async fn start_app(binary: &std::path::Path, vars: &[(&str, String)]) -> Result<(Driver, Client), app::Stopped> {
    let launched = Arc::new(app::AppProcess::new(binary));
    let driver = Driver::start(vars, launched.clone());
    let mut caps = serde_json::Map::new();
    caps.insert("browserName".into(), "wry".into());
    caps.insert("tauri:options".into(), json!({ "application": launched.launcher }));
    let url = format!("http://127.0.0.1:{}", driver.port);
    // A session opens once tauri-driver listens and the app runs; its request waits for the
    // app, and returns (refused) once the watchdog stops tauri-driver for an app that is gone.
    let client = app::until(Some(&launched), "a WebDriver session with tauri-driver", START, || {
        let (caps, url) = (caps.clone(), url.clone());
        async move {
            let mut builder = ClientBuilder::rustls().expect("rustls");
            let connecting = builder.capabilities(caps).connect(&url);
            tokio::time::timeout(START, connecting).await.ok()?.ok()
        }
    })
    .await?;
    // The window keeps its language between runs (every app here shares one webview store):
    // start in English. Only once the page said its first words (translated into the saved
    // language, or the connection's environment) does the toggle tell which language is on.
    app::until(Some(&launched), "the window's first words", START, || async {
        text_of(&client, "#lang-toggle").await?;
        let label = text_of(&client, "#env-label").await?;
        (!label.is_empty() && label != "Connecting…").then_some(())
    })
    .await?;
    if text_of(&client, "#lang-toggle").await.as_deref() == Some("English") {
        click(&client, "#lang-toggle").await;
    }
    Ok((driver, client))
}

#[sqlx::test(migrations = "../migrations")]
async fn an_on_call_engineer_finds_rewrites_and_audits_the_redis_high_product(pool: MySqlPool) {
    // Two TLS back ends are linked into the test (ring, aws-lc); pick one for the WebDriver client.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let redis = TestRedis::new("e2e").await;

    // The app starts with the one profile a fresh `sandbox up` leaves, on a seeded sale, and
    // an engine sells while the console watches, as `make demo` does.
    let (config, mysql_url) = seeded_sandbox(&pool, &redis).await;
    let engine = Engine::start(config.path());
    // What the console must show for the seeded REDIS_HIGH product: the core's own reading.
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    let seeded_drift = {
        let mut r = conns.redis.clone();
        let reading = stockguard_core::recon::read_products(&conns.mysql, &mut r, &conns.keys, &[REDIS_HIGH_PRODUCT])
            .await
            .unwrap()
            .remove(0);
        assert_eq!(reading.status, stockguard_core::recon::DriftStatus::RedisHigh, "{reading:?}");
        reading.drift.expect("a REDIS_HIGH product has a drift")
    };
    // The products the rewrite form is filled with when nothing is picked: those a rewrite
    // repairs, by the core's rule on its own reading (the seeded REDIS_HIGH, REDIS_LOW and
    // KEY_MISSING products; not the OVERSOLD or LEDGER_MISMATCH ones).
    let drifting = {
        let mut r = conns.redis.clone();
        let all = stockguard_core::recon::read_products(&conns.mysql, &mut r, &conns.keys, &[]).await.unwrap();
        let mut ids = stockguard_core::rewrite::repairable(&all);
        ids.sort_unstable();
        ids
    };
    assert_eq!(drifting, [1016, 1017, 1018], "the seeded drifts");
    let png_export = config.path().join("export").join("drift-1016.png");

    let _one_window = one_window_at_a_time().await;
    let (driver, client) = open_app(config.path(), "e2e-oncall").await;

    let outcome = async {
        let c = &client;
        let p = REDIS_HIGH_PRODUCT;
        // 1. Connected to the sandbox on its own: green banner, the board streaming, most
        //    severe first.
        //    (The overview is the first screen: the board is one click away.)
        wait_attr(c, "#nav [data-screen=overview]", "class", "current", "connected: the overview first").await;
        click(c, "#nav [data-screen=board]").await;
        wait_text(c, "#products tbody tr[data-product-id] td.status", "the board fills", |t| t == "OVERSOLD").await;
        wait_banner(c, "banner sandbox").await;
        wait_text(c, "#health-db", "the health strip shows DB latency", |t| t.ends_with("ms")).await;
        screenshot(c, "board").await;
        // The app writes what it did to its log file.
        wait_log_line(config.path(), &["Stockguard desktop started"]).await;
        wait_log_line(config.path(), &["connected", "profile=\"sandbox\"", "environment=sandbox"]).await;

        // 2. Filtered to REDIS_HIGH, the seeded product is at the top, with its seeded drift.
        choose(c, "#status-filter", "REDIS_HIGH").await;
        wait_text(c, "#products tbody tr[data-product-id] td.id", "1016 heads the REDIS_HIGH board", |t| {
            t == p.to_string()
        })
        .await;
        let row = format!("#products tbody tr[data-product-id=\"{p}\"]");
        wait_text(c, &format!("{row} td.drift"), "its seeded drift", |t| t == seeded_drift.to_string()).await;

        // 3. Its drift over time, drawn in Rust, and exported as a PNG.
        tick(c, &format!("{row} input.pick")).await;
        click(c, "#show-chart").await;
        let deadline = tokio::time::Instant::now() + STEP;
        loop {
            let src = c.find(Locator::Css("#chart")).await.unwrap().attr("src").await.unwrap().unwrap_or_default();
            if src.starts_with("data:image/svg+xml") {
                break;
            }
            assert!(tokio::time::Instant::now() < deadline, "the chart never showed");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        screenshot(c, "chart").await;
        type_into(c, "#png-path", &png_export.display().to_string()).await;
        click(c, "#export-png").await;
        wait_text(c, "#notice", "the PNG is saved", |t| t.contains("drift-1016.png")).await;
        assert_eq!(&std::fs::read(&png_export).unwrap()[..4], b"\x89PNG");

        // 4. A production profile for the same sale, created, tested and connected to in the
        //    Connections screen: the banner turns red.
        click(c, "#nav [data-screen=connections]").await;
        wait_text(c, "#profiles tbody tr[data-profile=sandbox] td.name", "the sandbox profile is listed", |t| {
            t.starts_with("sandbox")
        })
        .await;
        // A new profile has no environment until the person chooses one.
        type_into(c, "#profile-form [name=name]", "unlabelled").await;
        type_into(c, "#profile-form [name=mysqlUrl]", &mysql_url).await;
        type_into(c, "#profile-form [name=redisUrl]", &redis.url).await;
        click(c, "#profile-save").await;
        wait_text(c, "#error", "no environment chosen", |t| t.contains("choose the profile's environment")).await;
        assert!(c.find(Locator::Css("#profiles tbody tr[data-profile=unlabelled]")).await.is_err(), "nothing saved");
        // A password typed into a URL is refused with a typed error saying where it belongs.
        type_into(c, "#profile-form [name=name]", "leaky").await;
        choose(c, "#profile-form [name=environment]", "sandbox").await;
        type_into(c, "#profile-form [name=mysqlUrl]", "mysql://root:hunter2@db.internal:3306/sale").await;
        type_into(c, "#profile-form [name=redisUrl]", &redis.url).await;
        click(c, "#profile-save").await;
        wait_text(c, "#error", "the URL password is refused", |t| t.contains("must not hold a password")).await;
        let kind = c.find(Locator::Css("#error")).await.unwrap().attr("data-kind").await.unwrap();
        assert_eq!(kind.as_deref(), Some("profile"));
        assert!(c.find(Locator::Css("#profiles tbody tr[data-profile=leaky]")).await.is_err(), "nothing saved");

        type_into(c, "#profile-form [name=name]", "prod-drill").await;
        choose(c, "#profile-form [name=environment]", "production").await;
        type_into(c, "#profile-form [name=mysqlUrl]", &mysql_url).await;
        type_into(c, "#profile-form [name=redisUrl]", &redis.url).await;
        type_into(c, "#profile-form [name=keyPrefix]", redis.keys.prefix()).await;
        click(c, "#profile-save").await;
        wait_text(c, "#profiles tbody tr[data-profile=prod-drill] td.env", "the new profile is listed", |t| {
            t == "PRODUCTION"
        })
        .await;
        click(c, "#profiles tbody tr[data-profile=prod-drill] button.test").await;
        wait_text(c, "#notice", "the connection test answers", |t| t.contains("prod-drill: MySQL")).await;
        screenshot(c, "connections").await;
        click(c, "#profiles tbody tr[data-profile=prod-drill] button.connect").await;
        wait_banner(c, "banner production").await;

        // 5. Pick the product again on the production board and dry-run its rewrite.
        wait_text(c, &format!("{row} td.drift"), "the production board streams", |t| t == seeded_drift.to_string())
            .await;
        // Nothing is picked on the new connection: the rewrite form opens filled with the
        // products that drift, and says so above the field.
        click(c, "#nav [data-screen=repair]").await;
        let line = wait_text(c, "#rw-prefill", "the form says what it was filled with", |t| {
            t.starts_with("Filled with the 3 products that drift: ")
        })
        .await;
        let field = form_products(c).await.unwrap_or_default();
        assert_eq!(line, format!("Filled with the 3 products that drift: {field}"));
        let mut filled: Vec<u64> = field.split(", ").map(|id| id.parse().unwrap()).collect();
        filled.sort_unstable();
        assert_eq!(filled, drifting, "the form holds the products that drift: {field}");
        // The board redraws every tick: a pick can land on a row about to be replaced (or find
        // the box already ticked). Wait for the state: the box ticked and the form filled.
        // A try that missed leaves the window on the rewrite form (the board hidden, its boxes
        // not clickable): each try starts from the board.
        let deadline = tokio::time::Instant::now() + STEP;
        loop {
            click(c, "#nav [data-screen=board]").await;
            tick(c, &format!("{row} input.pick")).await;
            click(c, "#rewrite-selected").await;
            let picked = form_products(c).await;
            if picked.as_deref() == Some("1016") {
                break;
            }
            assert!(tokio::time::Instant::now() < deadline, "the rewrite form never got the pick: {picked:?}");
        }
        assert_eq!(text_of(c, "#rw-prefill").await.as_deref(), Some(""), "a pick wins, and needs no line");
        type_into(c, "#rw-reason", "e2e: seeded Redis drift").await;
        click(c, "#dry-run").await;
        let result = format!("#rewrite-results tbody tr[data-product-id=\"{p}\"]");
        wait_text(c, &format!("{result} td.outcome"), "the dry run answers", |t| t == "DRY_RUN").await;
        assert_eq!(text_of(c, &format!("{result} td.delta")).await.unwrap(), (-seeded_drift).to_string());
        // It shows the value it would write and the drift it would leave, and took no token.
        let before: i64 = text_of(c, &format!("{result} td.before")).await.unwrap().parse().unwrap();
        let would_write = before - seeded_drift;
        assert_eq!(text_of(c, &format!("{result} td.after")).await.unwrap(), would_write.to_string());
        assert_eq!(text_of(c, &format!("{result} td.drift-after")).await.unwrap(), "0");
        assert_eq!(text_of(c, &format!("{result} td.fence")).await.unwrap(), "-", "a dry run takes no fencing token");
        assert_eq!(
            text_of(c, &format!("#dry-run-said li[data-product-id=\"{p}\"]")).await.unwrap(),
            format!(
                "Dry run of {p}: would write {would_write} over {before} ({}), leaving drift 0. \
                 Nothing was written; no lock or fencing token taken.",
                -seeded_drift
            )
        );
        screenshot(c, "dry-run").await;

        // 6. The rewrite on production asks for the product id typed again.
        click(c, "#rewrite").await;
        let go = c.wait().at_most(STEP).for_element(Locator::Css("#confirm-go")).await.unwrap();
        assert!(!go.is_enabled().await.unwrap(), "confirm stays disabled until the id is typed");
        type_into(c, "#confirm-fields input.confirm-id", "1016").await;
        screenshot(c, "confirm").await;
        assert!(go.is_enabled().await.unwrap(), "typing the id enables the rewrite");
        go.click().await.unwrap();
        wait_text(c, &format!("{result} td.outcome"), "the rewrite applies", |t| t == "APPLIED").await;
        let fence = text_of(c, &format!("{result} td.fence")).await.unwrap();
        let audit_id = text_of(c, &format!("{result} td.audit")).await.unwrap();
        assert!(fence.parse::<u64>().unwrap() > 0 && audit_id.parse::<u64>().unwrap() > 0, "{fence} {audit_id}");
        assert_eq!(text_of(c, &format!("{result} td.drift-after")).await.unwrap(), "0");
        screenshot(c, "rewrite").await;

        // 7. The ledger check runs with its progress and names the seeded DB incidents.
        click(c, "#run-ledger").await;
        wait_text(c, "#ledger-summary", "the ledger check finishes", |t| t.contains("products checked")).await;
        screenshot(c, "reconcile").await;

        // 8. Back on the board the product's drift is 0.
        click(c, "#nav [data-screen=board]").await;
        choose(c, "#status-filter", "").await;
        type_into(c, "#search", "1016").await;
        wait_text(c, &format!("{row} td.drift"), "the drift is gone", |t| t == "0").await;
        assert_eq!(text_of(c, &format!("{row} td.status")).await.unwrap(), "OK");

        // 9. The audit log shows the rewrite, newest first.
        click(c, "#nav [data-screen=audit]").await;
        let audit_row = format!("#audit tbody tr[data-audit-id=\"{audit_id}\"]");
        wait_text(c, &format!("{audit_row} td.outcome"), "the rewrite is audited", |t| t == "APPLIED").await;
        assert_eq!(text_of(c, &format!("{audit_row} td.target")).await.unwrap(), "product:1016");
        assert_eq!(text_of(c, "#audit tbody tr td.id").await.unwrap(), audit_id, "newest first");
        screenshot(c, "audit").await;

        // 10. Degrade: DB mode on, acknowledged by the running engine; then the guided exit
        // (production: the scope typed again) walks its steps back to Redis.
        click(c, "#nav [data-screen=degrade]").await;
        type_into(c, "#dg-reason", "e2e drill: Redis suspected").await;
        click(c, "#dg-on").await;
        wait_text(c, "#dg-ack.complete", "every live instance applies DB mode", |t| {
            t.contains("applied by 1 of 1 live instances")
        })
        .await;
        wait_text(c, "#instances tbody tr.applied td.mode", "the engine reports DB mode", |t| t == "DEGRADED").await;
        wait_text(c, "#switch-scopes tbody tr[data-scope=global] td.mode", "the switch says DB mode", |t| {
            t == "DEGRADED"
        })
        .await;
        screenshot(c, "degrade-on").await;
        click(c, "#dg-off").await;
        type_into(c, "#exit-confirm-input", "global").await;
        click(c, "#exit-confirm-go").await;
        wait_text(c, "#dg-steps li[data-step=done]", "the guided exit completes", |t| t.contains("Back on Redis"))
            .await;
        for step in ["checked", "paused", "drained", "rebuilt", "resumed", "verified"] {
            assert!(text_of(c, &format!("#dg-steps li[data-step={step}]")).await.is_some(), "step {step} shown");
        }
        assert!(text_of(c, "#dg-steps li[data-step=verified]").await.unwrap().ends_with("drifting: none"));
        wait_text(c, "#instances tbody tr.applied td.mode", "the engine is back on Redis", |t| t == "NORMAL").await;
        screenshot(c, "degrade-exit").await;

        // 11. A profile is deleted in two clicks (the first one asks).
        click(c, "#nav [data-screen=connections]").await;
        wait_attr(c, "#profiles", "aria-busy", "false", "the profiles are listed again").await;
        let delete = "#profiles tbody tr[data-profile=sandbox] button.delete";
        click(c, delete).await;
        wait_text(c, delete, "the delete button asks first", |t| t == "Really delete?").await;
        click(c, delete).await;
        wait_text(c, "#notice", "the profile is deleted", |t| t.contains("Profile sandbox deleted")).await;
        assert!(c.find(Locator::Css("#profiles tbody tr[data-profile=sandbox]")).await.is_err());

        // 12. In Chinese, the board speaks Chinese.
        click(c, "#lang-toggle").await;
        click(c, "#nav [data-screen=board]").await;
        c.execute(
            "const s = document.querySelector('#search'); s.value = ''; s.dispatchEvent(new Event('input'));",
            vec![],
        )
        .await
        .unwrap();
        wait_text(c, "#products thead th:nth-child(12)", "the drift column in Chinese", |t| t == "偏差").await;
        wait_text(c, "#products tbody tr[data-product-id] td.status", "statuses in Chinese", |t| t == "超卖").await;
        assert_eq!(text_of(c, "#env-label").await.unwrap(), "生产环境");
        screenshot(c, "board-zh").await;
        click(c, "#lang-toggle").await;
    }
    .await;
    client.close().await.expect("session closes");
    drop(driver);
    drop(engine);
    outcome
}

/// How long a drill of the shortest form may take from its start to its verdict: the rig
/// (three engines started, products seeded), two seconds of load, the drain and the checks.
const SHORT_DRILL: Duration = Duration::from_secs(120);

/// A run's status as the database holds it.
/// The rewrite form's products once it shows them (the form fills as it opens), or what it
/// shows after a few frames: `None` when the form is not open.
async fn form_products(c: &Client) -> Option<String> {
    let mut shown = None;
    for _ in 0..10 {
        shown = match c.find(Locator::Css("#rw-products")).await {
            Ok(field) => field.prop("value").await.ok().flatten(),
            Err(_) => None,
        };
        if shown.as_deref().is_some_and(|v| !v.is_empty()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    shown
}

async fn run_status(pool: &MySqlPool, run: u64) -> String {
    sqlx::query_scalar("SELECT CAST(status AS CHAR) FROM drill_runs WHERE id = ?")
        .bind(run)
        .fetch_one(pool)
        .await
        .unwrap()
}

/// The run id in a notice such as "Drill run #12 started (...)".
fn run_id_in(notice: &str) -> u64 {
    let digits: String =
        notice.split('#').nth(1).unwrap_or_default().chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap_or_else(|_| panic!("no run id in {notice:?}"))
}

/// Whether an element matches `css` (for what has no text: SVG shapes).
async fn exists(client: &Client, css: &str) -> bool {
    client.find(Locator::Css(css)).await.is_ok()
}

/// Sets a range input the way a drag does: value, then an input event.
async fn scrub_to(client: &Client, css: &str, value: i64) {
    client
        .execute(
            "const s = document.querySelector(arguments[0]); s.value = String(arguments[1]); s.dispatchEvent(new Event('input'));",
            vec![json!(css), json!(value)],
        )
        .await
        .unwrap_or_else(|e| panic!("scrub {css} to {value}: {e}"));
}

#[sqlx::test(migrations = "../migrations")]
async fn a_facilitator_runs_halts_reports_compares_and_replays_drills_from_the_window(pool: MySqlPool) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let redis = TestRedis::new("e2edrill").await;
    let config = tempfile::tempdir().unwrap();
    let mysql_url = support::mysql_url_of(&pool).await;
    let mut store = ProfileStore::load(&config.path().join("profiles.toml")).unwrap();
    // A facilitator's profiles: drills are theirs (the catalogue gives on-call none).
    let facilitator = |environment| Profile { role: Role::Facilitator, ..profile(environment, &mysql_url, &redis) };
    store.upsert("sandbox", facilitator(EnvironmentKind::Sandbox)).unwrap();
    store.upsert("prod-look", facilitator(EnvironmentKind::Production)).unwrap();
    store.save().unwrap();
    // The app starts drills with the `stockguard` binary beside it (as `cargo build` places
    // both): said here, before a window waits for a run that cannot start.
    let runner = std::path::Path::new(env!("CARGO_BIN_EXE_stockguard-desktop")).with_file_name("stockguard");
    assert!(runner.is_file(), "{} is not built: run `cargo build -p stockguard` (make test does)", runner.display());

    let _one_window = one_window_at_a_time().await;
    let (driver, client) = open_app(config.path(), "e2e-facilitator").await;
    let outcome = async {
        let c = &client;
        wait_banner(c, "banner sandbox").await;

        // 1. The shortest redis-slow, started from the window, goes live: its phase, its
        //    ticks, its charts, every tick invariant green.
        click(c, "#nav [data-screen=drills]").await;
        wait_text(c, "#drill-name option[value=redis-slow]", "the built-in drills are listed", |t| {
            t.contains("Redis slow")
        })
        .await;
        choose(c, "#drill-name", "redis-slow").await;
        choose(c, "#drill-short", "0.1").await;
        wait_text(c, "#drill-about", "the drill is described", |t| t.contains("300 ms")).await;
        click(c, "#drill-run").await;
        let notice = wait_text(c, "#notice", "the drill starts", |t| t.starts_with("Drill run #")).await;
        let first = run_id_in(&notice);
        wait_text(c, "#drill-view-title", "the run is watched", |t| t.starts_with(&format!("Run #{first}"))).await;
        wait_text(c, "#drill-view-status", "it runs", |t| t.starts_with("RUNNING")).await;
        wait_text_within(c, "#drill-state [data-state=backlog]", "its ticks arrive", SHORT_DRILL, |t| t != "-").await;
        wait_text(c, "#drill-invariants li[data-invariant=oversell].ok", "no oversell so far", |t| {
            t.contains("No oversell")
        })
        .await;
        assert!(exists(c, "#drill-charts svg.chart path.series").await, "the charts draw the timeline");
        // Photographed once its fault is over, with a few seconds drawn.
        wait_text_within(c, "#drill-log li[data-kind=fault_restored]", "the fault ends", SHORT_DRILL, |t| {
            t.contains("fault off")
        })
        .await;
        screenshot(c, "drills-live").await;
        let verdict = wait_text_within(c, "#drill-view-status", "the run reaches its verdict", SHORT_DRILL, |t| {
            t != "RUNNING" && !t.starts_with("RUNNING ")
        })
        .await;
        assert_eq!(verdict, run_status(&pool, first).await, "the window shows the database's verdict");
        assert!(
            text_of(c, "#drill-invariants li[data-invariant=no_accepted_order_lost]").await.is_some(),
            "the verdict's invariants"
        );

        // 2. A second run, halted from the window with a reason: HALTED, and audited.
        choose(c, "#drill-short", "1").await;
        click(c, "#drill-run").await;
        let notice = wait_text(c, "#notice", "the second drill starts", |t| {
            t.starts_with("Drill run #") && run_id_in(t) != first
        })
        .await;
        let second = run_id_in(&notice);
        wait_text(c, "#drill-view-status", "the second run is live", |t| t.starts_with("RUNNING")).await;
        click(c, "#drill-halt").await;
        type_into(c, "#halt-reason", "e2e: the drill hurt a real sale").await;
        click(c, "#halt-go").await;
        wait_text(c, "#notice", "the halt is requested", |t| t == format!("Halt requested for run(s) #{second}."))
            .await;
        let halted = format!("#drill-history tr[data-run-id=\"{second}\"] td.status");
        wait_text_within(c, &halted, "the run ends HALTED", SHORT_DRILL, |t| t == "HALTED").await;
        assert_eq!(run_status(&pool, second).await, "HALTED");
        let audited = support::scalar(&pool, "SELECT COUNT(*) FROM audit_log WHERE action = 'drill.halt'").await;
        assert_eq!(audited, 1, "the halt is audited");

        // 3. The first run's report, rendered by the core, in the window.
        click(c, &format!("#drill-history tr[data-run-id=\"{first}\"] button.report")).await;
        wait_text(c, "#drill-report-title", "the report opens", |t| t == format!("Report of run #{first}")).await;
        let html =
            c.find(Locator::Css("#drill-report")).await.unwrap().attr("srcdoc").await.unwrap().unwrap_or_default();
        assert!(
            html.contains("<svg") && html.contains(&format!("#{first}")),
            "the report is the core's HTML with charts"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
        screenshot(c, "drills-report").await;
        click(c, "#drill-report-close").await;

        // 4. The two runs compared, the halted one (ticked first) as the baseline: every
        //    figure, regressions marked.
        tick(c, &format!("#drill-history tr[data-run-id=\"{second}\"] input.pick")).await;
        tick(c, &format!("#drill-history tr[data-run-id=\"{first}\"] input.pick")).await;
        click(c, "#drill-compare-go").await;
        wait_text(c, "#drill-compare-table tr[data-figure=oversold_units] td.figure", "the comparison shows", |t| {
            t == "Units oversold (must be 0)"
        })
        .await;
        let head = text_of(c, "#drill-compare .compare-head").await.unwrap();
        assert!(head.starts_with(&format!("A: #{second} HALTED")) && head.contains(&format!("B: #{first} ")), "{head}");
        wait_text(c, "#drill-compare-verdict", "the verdict of the comparison", |t| {
            t == "No regression." || t.contains("regression(s)")
        })
        .await;
        c.execute("document.getElementById('drill-compare').scrollIntoView();", vec![]).await.unwrap();
        screenshot(c, "drills-compare").await;

        // 5. The first run replayed: scrubbed into its fault, where the fault is on, then
        //    played to its end at 16x.
        let fault_at: i64 =
            sqlx::query_scalar("SELECT MIN(offset_ms) FROM drill_events WHERE run_id = ? AND kind = 'fault_injected'")
                .bind(first)
                .fetch_one(&pool)
                .await
                .unwrap();
        click(c, &format!("#drill-history tr[data-run-id=\"{first}\"] button.replay")).await;
        wait_text(c, "#drill-view-title", "the replay opens", |t| t.starts_with(&format!("Replay of run #{first}")))
            .await;
        scrub_to(c, "#replay-scrub", fault_at + 100).await;
        wait_text(c, "#drill-state [data-state=faults]", "the fault is on at its time", |t| {
            t.contains("300 ms on every Redis reply")
        })
        .await;
        assert!(exists(c, "#drill-charts svg.chart line.cursor").await, "the charts mark the moment");
        c.execute("document.getElementById('drill-view').scrollIntoView();", vec![]).await.unwrap();
        screenshot(c, "drills-replay").await;
        choose(c, "#replay-speed", "16").await;
        click(c, "#replay-play").await;
        wait_attr(c, "#replay-play", "data-playing", "false", "the replay plays to the end at 16x").await;
        let end = text_of(c, "#replay-at").await.unwrap();
        let (now, last) = end.split_once(" / ").unwrap();
        assert_eq!(now, last, "the cursor reached the end");
        wait_text(c, "#drill-state [data-state=phase]", "the last phase", |t| t != "-" && t != "load").await;
        assert!(
            exists(c, "#drill-invariants li[data-invariant=no_accepted_order_lost]").await,
            "at its end the replay shows the verdict's invariants"
        );

        // 6. In Chinese.
        click(c, "#lang-toggle").await;
        wait_text(c, "#nav [data-screen=drills]", "the screen in Chinese", |t| t == "故障演练").await;
        wait_text(c, "#drill-history tr[data-run-id] td.status", "statuses in Chinese", |t| t == "已叫停").await;
        c.execute(
            "document.querySelector('main').scrollTo(0, 0); document.getElementById('screen-drills').scrollIntoView();",
            vec![],
        )
        .await
        .unwrap();
        screenshot(c, "drills-zh").await;
        click(c, "#lang-toggle").await;

        // 7. On a production profile the Run button is off and says why; Halt still works.
        click(c, "#nav [data-screen=connections]").await;
        click(c, "#profiles tbody tr[data-profile=prod-look] button.connect").await;
        wait_banner(c, "banner production").await;
        click(c, "#nav [data-screen=drills]").await;
        wait_text(c, "#drill-refusal", "the refusal is said", |t| t.contains("refused on production")).await;
        let run_button = c.find(Locator::Css("#drill-run")).await.unwrap();
        assert!(!run_button.is_enabled().await.unwrap(), "no drill starts on production");
        click(c, "#drill-halt").await;
        type_into(c, "#halt-reason", "e2e: nothing should run here").await;
        click(c, "#halt-go").await;
        wait_text(c, "#notice", "a halt with nothing running says so", |t| t.starts_with("No drill was running")).await;
    }
    .await;
    client.close().await.expect("session closes");
    drop(driver);
    outcome
}

/// The board's own measure of each update (tick arrival to the next frame) and of each
/// reading, over `ticks` ticks, sorted.
async fn sample_board_updates(c: &Client, ticks: usize) -> (Vec<f64>, Vec<f64>) {
    let mut updates = Vec::new();
    let mut readings = Vec::new();
    let mut last_at = String::new();
    let number = |t: Option<String>| t.and_then(|t| t.trim_end_matches(" ms").parse::<f64>().ok());
    while updates.len() < ticks {
        last_at = wait_text(c, "#health-at", "the board ticks", |t| t != last_at && t != "-").await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        updates.extend(number(text_of(c, "#health-render").await));
        readings.extend(number(text_of(c, "#health-took").await));
    }
    updates.sort_by(f64::total_cmp);
    readings.sort_by(f64::total_cmp);
    (updates, readings)
}

/// Products on the board of the scale test: the "thousands of products".
const SCALE_PRODUCTS: u64 = 5_000;

#[sqlx::test(migrations = "../migrations")]
async fn the_board_stays_usable_with_five_thousand_products(pool: MySqlPool) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let redis = TestRedis::new("e2e5k").await;
    let first = 100_000u64;
    let ids: Vec<u64> = (first..first + SCALE_PRODUCTS).collect();
    let values: Vec<String> = ids.iter().map(|id| format!("({id}, 'Scale product {id}', 100, 100, 5)")).collect();
    sqlx::query(&format!(
        "INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit) VALUES {}",
        values.join(",")
    ))
    .execute(&pool)
    .await
    .unwrap();
    // Every hundredth product one unit high in Redis, so the board has something to sort.
    let mut pipe = redis::pipe();
    for id in &ids {
        pipe.set(redis.keys.stock(*id), if id.is_multiple_of(100) { 101 } else { 100 }).ignore();
    }
    let _: () = pipe.query_async(&mut redis.conn().await).await.unwrap();

    let (config, _) = sandbox_profile(&pool, &redis).await;

    let _one_window = one_window_at_a_time().await;
    let (driver, client) = open_app(config.path(), "e2e-scale").await;
    let outcome = async {
        let c = &client;
        wait_attr(c, "#nav [data-screen=overview]", "class", "current", "connected: the overview first").await;
        click(c, "#nav [data-screen=board]").await;
        let total = format!("{SCALE_PRODUCTS} of {SCALE_PRODUCTS} products");
        wait_text(c, "#board-count", "all products arrive", |t| t == total).await;
        wait_text(c, "#products tbody tr[data-product-id] td.status", "drift first", |t| t == "REDIS_HIGH").await;

        // Only the rows in view exist: the list is windowed.
        let rows = c
            .execute("return document.querySelectorAll('#products tbody tr[data-product-id]').length;", vec![])
            .await
            .unwrap();
        let rows = rows.as_u64().unwrap();
        assert!(rows > 10 && rows < 100, "{rows} rows in the DOM for {SCALE_PRODUCTS} products");

        let (updates, readings) = sample_board_updates(c, 15).await;
        println!(
            "board with {SCALE_PRODUCTS} products: update (tick to next frame) median {:.1} ms, max {:.1} ms; \
             reading median {:.1} ms, max {:.1} ms; {rows} rows in the DOM",
            updates[updates.len() / 2],
            updates[updates.len() - 1],
            readings[readings.len() / 2],
            readings[readings.len() - 1],
        );

        // Scrolled to the end, the last product is drawn; a search finds one among thousands.
        c.execute("const s = document.getElementById('board-scroll'); s.scrollTop = s.scrollHeight;", vec![])
            .await
            .unwrap();
        let last = first + SCALE_PRODUCTS - 1;
        wait_text(c, &format!("#products tbody tr[data-product-id=\"{last}\"] td.id"), "the last row", |t| {
            t == last.to_string()
        })
        .await;
        type_into(c, "#search", "104321").await;
        wait_text(c, "#products tbody tr[data-product-id] td.id", "the searched product", |t| t == "104321").await;
        wait_text(c, "#board-count", "one match", |t| t == format!("1 of {SCALE_PRODUCTS} products")).await;
        // The same update with one row shown: what the frame itself costs.
        let (updates, _) = sample_board_updates(c, 8).await;
        println!(
            "board with {SCALE_PRODUCTS} products, one shown: update median {:.1} ms, max {:.1} ms",
            updates[updates.len() / 2],
            updates[updates.len() - 1],
        );
    }
    .await;
    client.close().await.expect("session closes");
    drop(driver);
    outcome
}

#[sqlx::test(migrations = "../migrations")]
async fn a_maker_a_checker_and_an_executor_walk_a_compensation_case_through_the_window(pool: MySqlPool) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let redis = TestRedis::new("e2ecomp").await;
    // Ten units at 12.50 sold thirteen times: three beyond stock.
    support::oversold::seed(&pool, 77, 10, 13, 1250, "L").await;
    // Three people, three MySQL accounts: the workflow's four eyes are the database's, keyed on
    // who is connected.
    let config = tempfile::tempdir().unwrap();
    let mut store = ProfileStore::load(&config.path().join("profiles.toml")).unwrap();
    for person in ["maker", "checker", "executor", "viewer"] {
        let url = support::accounts::account_without_password(&pool, person).await;
        if person == "viewer" {
            // Reads only: the servers' own grants, which the window must read and show.
            let user = url::Url::parse(&url).unwrap().username().to_string();
            sqlx::query(&format!("REVOKE ALL PRIVILEGES, GRANT OPTION FROM '{user}'@'%'"))
                .execute(&pool)
                .await
                .unwrap();
            let db: String = sqlx::query_scalar("SELECT DATABASE()").fetch_one(&pool).await.unwrap();
            sqlx::query(&format!("GRANT SELECT ON `{db}`.* TO '{user}'@'%'")).execute(&pool).await.unwrap();
        }
        let mut p = profile(EnvironmentKind::Sandbox, &url, &redis);
        p.role = Role::Approver;
        store.upsert(person, p).unwrap();
    }
    store.save().unwrap();

    let _one_window = one_window_at_a_time().await;
    let (driver, client) = open_app(config.path(), "e2e-approver").await;
    let outcome = async {
        let c = &client;
        let connect_as = |name: &'static str| async move {
            click(c, "#nav [data-screen=connections]").await;
            click(c, &format!("#profiles tbody tr[data-profile={name}] button.connect")).await;
            wait_text(c, "#conn-detail", "connected as the person", |t| t.starts_with(&format!("{name} ·"))).await;
            click(c, "#nav [data-screen=compensation]").await;
        };

        // 1. The maker opens the case: exactly the three orders beyond stock, the last ones.
        connect_as("maker").await;
        type_into(c, "#cp-product", "77").await;
        click(c, "#cp-open").await;
        wait_text(c, "#notice", "the case opens", |t| t.contains("3 lines added")).await;
        wait_text(c, "#cp-lines tbody tr:nth-child(3) td", "its lines", |t| !t.is_empty()).await;
        let mut orders = Vec::new();
        for row in c.find_all(Locator::Css("#cp-lines tbody tr")).await.unwrap() {
            orders.push(row.attr("data-order-no").await.unwrap().unwrap_or_default());
        }
        assert_eq!(orders, ["L011", "L012", "L013"]);
        // Why these orders: each line says its unit's place among those sold, beyond the stock.
        wait_text(c, "#cp-lines tbody tr:nth-child(1) td:nth-child(6)", "why the first line", |t| {
            t.contains("unit #11 sold, beyond the 10 on sale")
        })
        .await;
        choose(c, "#cp-oversold", "CANCEL_REFUND").await;
        click(c, "#cp-save-plan").await;
        wait_text(c, "#notice", "the plan is saved, and said", |t| t == "Plan saved.").await;
        type_into(c, "#cp-note", "refund the three beyond stock").await;
        click(c, "#cp-propose").await;
        wait_text(c, "#cp-head", "proposed", |t| t.contains("proposed") && t.contains("37.50")).await;
        // The maker's own approval: the button is there, the database says no.
        type_into(c, "#cp-reason", "looks right to me").await;
        click(c, "#cp-approve").await;
        wait_text(c, "#error", "four eyes", |t| t.contains("another person must approve")).await;
        screenshot(c, "compensation-proposed").await;

        // 2. The checker approves.
        connect_as("checker").await;
        wait_text(c, "#cp-inbox tbody tr[data-case-id='1'] td.status", "the inbox", |t| t == "proposed").await;
        click(c, "#cp-inbox tbody tr[data-case-id='1'] td.status").await;
        wait_text(c, "#cp-head", "the case", |t| t.contains("Case 1")).await;
        type_into(c, "#cp-reason", "checked against the ledger").await;
        click(c, "#cp-approve").await;
        wait_text(c, "#cp-head", "approved", |t| t.contains("approved")).await;
        screenshot(c, "compensation-approved").await;

        // 3. The executor types the case id again and executes: one effect per line.
        connect_as("executor").await;
        wait_text(c, "#cp-inbox tbody tr[data-case-id='1'] td.status", "the inbox", |t| t == "approved").await;
        click(c, "#cp-inbox tbody tr[data-case-id='1'] td.status").await;
        wait_text(c, "#cp-head", "the case", |t| t.contains("approved")).await;
        type_into(c, "#cp-confirm", "1").await;
        click(c, "#cp-execute").await;
        wait_text(c, "#notice", "executed", |t| t.starts_with("3 done")).await;
        wait_text(c, "#cp-head", "executed", |t| t.contains("executed")).await;
        screenshot(c, "compensation-executed").await;
        let stock: i32 =
            sqlx::query_scalar("SELECT stock FROM inventory WHERE product_id = 77").fetch_one(&pool).await.unwrap();
        assert_eq!(stock, 0, "the three cancelled units paid back the deficit, once");

        // 4. In Chinese.
        click(c, "#lang-toggle").await;
        wait_text(c, "#cp-head", "the case in Chinese", |t| t.contains("已执行")).await;
        wait_text(c, "#cp-lines tbody tr:nth-child(1) td:nth-child(6)", "why, in Chinese", |t| {
            t.contains("售出的第 11 件，超出在售的 10 件")
        })
        .await;
        screenshot(c, "compensation-zh").await;
        click(c, "#lang-toggle").await;

        // 4b. Closing the case is a step of its own: a dialog says what it does and takes the
        //     reason; Cancel leaves the case as it was.
        click(c, "#cp-close").await;
        wait_text(c, "#cp-close-hint", "the close dialog", |t| t.contains("files the case")).await;
        click(c, "#cp-close-dialog button[value=cancel]").await;
        wait_text(c, "#cp-head", "still executed", |t| t.contains("executed")).await;
        click(c, "#cp-close").await;
        wait_text(c, "#cp-close-title", "the close dialog", |t| t.contains("Close case 1")).await;
        type_into(c, "#cp-close-reason", "paid in full").await;
        click(c, "#cp-close-go").await;
        wait_text(c, "#cp-head", "closed", |t| t.contains("closed")).await;
        let reason: String =
            sqlx::query_scalar("SELECT reason FROM compensation_steps WHERE case_id = 1 AND step = 'CLOSE'")
                .fetch_one(&pool)
                .await
                .unwrap();
        assert_eq!(reason, "paid in full");

        // 5. A reader's account: the window reads its rights from the servers and turns its
        //    write actions off, each saying why; nothing ends in a raw server error.
        connect_as("viewer").await;
        let open_case = c.find(Locator::Css("#cp-open")).await.unwrap();
        assert!(!open_case.is_enabled().await.unwrap(), "a reader cannot open a case");
        let why = open_case.attr("title").await.unwrap().unwrap_or_default();
        assert!(why.contains("has no INSERT on compensation"), "{why}");
        click(c, "#nav [data-screen=connections]").await;
        wait_text(c, "#rights li[data-capability=rewrite]", "the rights are listed", |t| {
            t.contains("refused by the server") && t.contains("has no INSERT on rewrite_runs")
        })
        .await;
        wait_text(c, "#rights li[data-capability=read]", "reading is allowed", |t| t.ends_with("allowed")).await;
        let rewrite = c.find(Locator::Css("#rewrite")).await.unwrap();
        assert!(!rewrite.is_enabled().await.unwrap(), "a reader cannot rewrite");
        c.execute("document.getElementById('rights-who').scrollIntoView();", vec![]).await.unwrap();
        screenshot(c, "rights-viewer").await;
    }
    .await;
    client.close().await.expect("session closes");
    drop(driver);
    support::accounts::forget(&pool).await;
    outcome
}
