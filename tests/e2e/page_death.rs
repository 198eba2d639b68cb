//! The window's page dies: WebKit's process that draws it (`WebKitWebProcess`) is killed, as
//! a crash or WebKit's memory limit would end it. The app says so on standard error with
//! WebKit's reason, loads the page again, and the page connects again; before, the window
//! stayed blank with nothing said (`src-tauri/src/page_watch.rs`).

use super::*;

/// The lines of the app's log (in `config_dir/logs`) that hold `words`.
fn log_lines_with(config_dir: &std::path::Path, words: &str) -> usize {
    let mut text = String::new();
    for entry in std::fs::read_dir(config_dir.join("logs")).into_iter().flatten().flatten() {
        text.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
    }
    text.lines().filter(|line| line.contains(words)).count()
}

/// The parent of `pid`, from `/proc/pid/stat` (`pid (comm) state ppid ...`).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

/// The processes named `comm` whose ancestors include `ancestor` (WebKit may start its web
/// process under a sandbox's launcher, so not always as a child).
fn descendants_named(ancestor: i32, comm: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if name.trim() != comm {
            continue;
        }
        let mut up = parent_of(pid);
        while let Some(p) = up.filter(|p| *p > 1) {
            if p == ancestor {
                found.push(pid);
                break;
            }
            up = parent_of(p);
        }
    }
    found
}

#[sqlx::test(migrations = "../migrations")]
async fn a_window_whose_page_died_says_why_and_comes_back_connected(pool: MySqlPool) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let redis = TestRedis::new("e2epage").await;
    let (config, _) = sandbox_profile(&pool, &redis).await;

    let _one_window = one_window_at_a_time().await;
    let (driver, client) = open_app(config.path(), "e2e-page").await;
    let app = driver.app.clone();
    let dir = config.path();
    app::until(Some(&app), "the window connects", STEP, || async {
        (log_lines_with(dir, "connected") >= 1).then_some(())
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let connected_before = log_lines_with(dir, "connected");

    // WebKit names its page's process `WebKitWebProcess` (a name is cut at 15 characters).
    let pid = app.pid().expect("the app wrote its pid");
    let pages = descendants_named(pid, "WebKitWebProces");
    assert!(!pages.is_empty(), "the app (pid {pid}) has no WebKitWebProcess");
    for page in &pages {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(*page), nix::sys::signal::Signal::SIGKILL)
            .expect("the page's process is killed");
    }

    // The app is still there (a wait ends at once, in its words, if not), says why, and its
    // page, loaded again, connects again.
    let said = "the window's page died (it crashed): loading it again";
    app::until(Some(&app), "the app says its page died", STEP, || async {
        app.last_words().contains(said).then_some(())
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    app::until(Some(&app), "the page loaded again connects again", STEP, || async {
        (log_lines_with(dir, "connected") > connected_before).then_some(())
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(!descendants_named(pid, "WebKitWebProces").iter().any(|p| pages.contains(p)), "the killed page is gone");

    // WebKit ends the WebDriver session of a page that died: closing it may fail.
    let _ = client.close().await;
    drop(driver);
}
