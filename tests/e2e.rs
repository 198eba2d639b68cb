//! End-to-end: the real desktop app, driven through tauri-driver and WebKitWebDriver, against
//! a freshly seeded sandbox sale. Needs a display (`make test` runs it under Xvfb) and
//! `tauri-driver` (`make deps` installs it); without either it fails, saying so.

#[path = "support/mod.rs"]
mod support;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{ClientBuilder, Locator};
use sqlx::MySqlPool;
use stockguard::profile::EnvironmentKind;
use stockguard::sandbox::{self, DEMO_PRODUCTS};
use support::TestRedis;

/// tauri-driver, stopped with SIGTERM on drop: only then does it stop WebKitWebDriver, whose
/// open pipes would otherwise keep the test run hanging.
struct Driver {
    child: Child,
    port: u16,
}

impl Driver {
    fn start(env: &[(&str, String)]) -> Self {
        let binary = which("tauri-driver").unwrap_or_else(|| {
            panic!("tauri-driver is not installed: run `make deps` (cargo install tauri-driver --locked)")
        });
        assert!(
            std::env::var_os("DISPLAY").is_some(),
            "no DISPLAY: the end-to-end test drives a real window; run it under Xvfb (`make test` does)"
        );
        let port = free_port();
        let native_port = free_port();
        let mut cmd = Command::new(binary);
        cmd.args(["--port", &port.to_string(), "--native-port", &native_port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        if let Some(native) = which("WebKitWebDriver") {
            cmd.arg("--native-driver").arg(native);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("tauri-driver starts");
        Self { child, port }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let _ = self.child.wait();
    }
}

fn which(name: &str) -> Option<std::path::PathBuf> {
    let mut dirs: Vec<std::path::PathBuf> =
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).collect();
    if let Some(home) = std::env::var_os("CARGO_HOME")
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo").into_os_string()))
    {
        dirs.push(std::path::Path::new(&home).join("bin"));
    }
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[sqlx::test(migrations = "../migrations")]
async fn the_window_lists_the_seeded_products_with_their_drift_status(pool: MySqlPool) {
    // Two TLS back ends are linked into the test (ring, aws-lc); pick one for the WebDriver client.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let redis = TestRedis::new("e2e").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    sandbox::seed(&conns, &mut |_| {}).await.expect("seed");
    let config = tempfile::tempdir().unwrap();

    let driver = Driver::start(&[
        ("STOCKGUARD_MYSQL_URL", support::mysql_url_of(&pool).await),
        ("STOCKGUARD_REDIS_URL", redis.url.clone()),
        ("STOCKGUARD_KEY_PREFIX", redis.keys.prefix().to_string()),
        ("STOCKGUARD_ENVIRONMENT", "sandbox".to_string()),
        ("STOCKGUARD_CONFIG_DIR", config.path().display().to_string()),
    ]);

    let mut caps = serde_json::Map::new();
    caps.insert("browserName".into(), "wry".into());
    caps.insert("tauri:options".into(), serde_json::json!({ "application": env!("CARGO_BIN_EXE_stockguard-desktop") }));
    let url = format!("http://127.0.0.1:{}", driver.port);
    let client = {
        let mut attempt = 0;
        loop {
            match ClientBuilder::rustls().expect("rustls").capabilities(caps.clone()).connect(&url).await {
                Ok(c) => break c,
                Err(e) if attempt < 50 => {
                    attempt += 1;
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => panic!("cannot open a WebDriver session with tauri-driver: {e}"),
            }
        }
    };

    let outcome = async {
        let first_row = client
            .wait()
            .at_most(Duration::from_secs(30))
            .for_element(Locator::Css("#products tbody tr"))
            .await
            .expect("the product table fills");
        let rows = client.find_all(Locator::Css("#products tbody tr")).await.unwrap();
        assert_eq!(rows.len(), DEMO_PRODUCTS.len());

        let names = client.find_all(Locator::Css("#products tbody td.name")).await.unwrap();
        let mut shown = Vec::new();
        for n in names {
            shown.push(n.text().await.unwrap());
        }
        assert!(shown.iter().any(|n| n == "Limited sneakers 限量球鞋"), "seeded name shown: {shown:?}");

        // Most severe first: the oversold product heads the table.
        let top_status = first_row.find(Locator::Css("td.status")).await.unwrap().text().await.unwrap();
        assert_eq!(top_status, "OVERSOLD");
        let banner = client.find(Locator::Css("#banner")).await.unwrap();
        assert_eq!(banner.attr("class").await.unwrap().as_deref(), Some("banner sandbox"));
    }
    .await;
    client.close().await.expect("session closes");
    drop(driver);
    outcome
}
