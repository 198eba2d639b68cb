//! `make demo` as a person runs it: in a terminal, stopped with Ctrl-C. The terminal is a real
//! pseudo-terminal (`script` from util-linux holds it), so Ctrl-C is the line discipline's
//! SIGINT to the foreground process group, exactly as a keyboard sends it. And a demo left
//! running keeps selling: its buyers' units come back through the sale's own close and relay.

use crate::support;

use std::io::{Read as _, Write as _};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sqlx::MySqlPool;
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::recon::{read_products, DriftStatus};
use stockguard_engine::sandbox::DEMO_TRAFFIC;

/// The processes whose environment carries `marker` (every process `make demo` starts
/// inherits it): `(pid, command line)`.
fn processes_with(marker: &str) -> Vec<(u32, String)> {
    let needle = format!("STOCKGUARD_KEY_PREFIX={marker}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else { continue };
        if environ.split(|b| *b == 0).any(|var| var == needle.as_bytes()) {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            found.push((pid, cmdline.trim().to_string()));
        }
    }
    found
}

/// A process's state letter and signal masks, from `/proc` (`R`, `S`, `T` stopped, `Z`).
fn state_of(pid: u32) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .filter(|l| ["State:", "SigIgn:", "SigCgt:", "PPid:"].iter().any(|k| l.starts_with(k)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `make demo` running in a pseudo-terminal, on this test's database and Redis prefix, with no
/// display (so its window is the drift table in the terminal).
struct Demo {
    child: std::process::Child,
    shown: Arc<Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
    /// The key prefix: every process the demo starts carries it in its environment.
    marker: String,
    _dir: tempfile::TempDir,
}

impl Demo {
    async fn start(pool: &MySqlPool, redis: &support::TestRedis) -> Self {
        let marker = redis.keys.prefix().to_string();
        let dir = tempfile::tempdir().unwrap();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let target = std::path::Path::new(env!("CARGO_BIN_EXE_stockguard")).parent().unwrap().parent().unwrap();
        let mut cmd = std::process::Command::new("script");
        // -q quiet, -e the command's exit status, -f flush as it comes; the typescript is discarded.
        cmd.args(["-qef", "-c", "make --no-print-directory demo", "/dev/null"]).current_dir(root);
        for k in support::PROFILE_OVERRIDES {
            cmd.env_remove(k);
        }
        cmd.env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env("STOCKGUARD_DEMO_NO_BUILD", "1")
            .env("CARGO_TARGET_DIR", target)
            .env("STOCKGUARD_CONFIG_DIR", dir.path().join("config"))
            .env("STOCKGUARD_SANDBOX_DIR", dir.path().join("sandbox"))
            .env("STOCKGUARD_MYSQL_URL", support::mysql_url_of(pool).await)
            .env("STOCKGUARD_REDIS_URL", &redis.url)
            .env("STOCKGUARD_KEY_PREFIX", &marker)
            .env("STOCKGUARD_ENVIRONMENT", "sandbox")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        // As a person's terminal has them: SIGINT and SIGQUIT at their defaults. A test run
        // started in the background of a script (CI's may be) inherits them ignored, and an
        // ignored disposition survives exec: Ctrl-C would then stop nothing, fix or no fix.
        // And SIGHUP ignored: `script` closes its terminal once `make` exits, which hangs up
        // whatever still runs in it, but a person's terminal stays open after Ctrl-C and hangs
        // up nothing. The hang-up had been ending the demo's buyers here while in a terminal
        // they ran on (seen from a run under `nohup`, which ignores SIGHUP).
        // SAFETY: between fork and exec only signal(2), which is async-signal-safe, runs.
        unsafe {
            use std::os::unix::process::CommandExt as _;
            cmd.pre_exec(|| {
                use nix::sys::signal::{signal, SigHandler, Signal};
                for sig in [Signal::SIGINT, Signal::SIGQUIT] {
                    signal(sig, SigHandler::SigDfl).map_err(std::io::Error::from)?;
                }
                signal(Signal::SIGHUP, SigHandler::SigIgn).map_err(std::io::Error::from)?;
                Ok(())
            });
        }
        let mut child = cmd.spawn().expect("script(1) from util-linux starts");
        let shown = Arc::new(Mutex::new(String::new()));
        let mut out = child.stdout.take().unwrap();
        let reader = {
            let shown = shown.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = out.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    shown.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            })
        };
        let demo = Self { child, shown, reader: Some(reader), marker, _dir: dir };
        // The demo is up: its table in the terminal, the engine and the buyers running.
        let deadline = Instant::now() + Duration::from_secs(180);
        while !(demo.said().contains("showing the live drift table")
            && demo.running(" load ")
            && demo.running("engine serve"))
        {
            assert!(
                Instant::now() < deadline,
                "the demo's live table, its engine and its buyers did not show within 180 s; the terminal said:\n{}\n\
                 its processes: {:#?}",
                demo.said(),
                processes_with(&demo.marker)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        demo
    }

    /// What the terminal showed so far.
    fn said(&self) -> String {
        self.shown.lock().unwrap().clone()
    }

    fn running(&self, what: &str) -> bool {
        processes_with(&self.marker).iter().any(|(_, cmd)| cmd.contains(what))
    }

    /// Presses Ctrl-C and waits until no process of the demo is left (60 s at most).
    fn ctrl_c(mut self) {
        let before = processes_with(&self.marker);
        println!("before Ctrl-C: {before:#?}");
        self.child.stdin.as_mut().unwrap().write_all(b"\x03").unwrap();
        self.child.stdin.as_mut().unwrap().flush().unwrap();
        let ended = Instant::now() + Duration::from_secs(60);
        while !processes_with(&self.marker).is_empty() {
            assert!(
                Instant::now() < ended,
                "left running 60 s after Ctrl-C: {:#?}\nstates: {:?}\nthe terminal said:\n{}",
                processes_with(&self.marker),
                processes_with(&self.marker).iter().map(|(pid, _)| state_of(*pid)).collect::<Vec<_>>(),
                self.said()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let status = self.child.wait().unwrap();
        self.reader.take().unwrap().join().unwrap();
        println!("make demo ended {status} after Ctrl-C; the terminal said:\n{}", self.said());
        assert!(processes_with(&self.marker).is_empty(), "left running: {:?}", processes_with(&self.marker));
    }
}

impl Drop for Demo {
    /// A test that failed before its Ctrl-C still ends its demo (the terminal may be gone).
    fn drop(&mut self) {
        if let Some(stdin) = self.child.stdin.as_mut() {
            let _ = stdin.write_all(b"\x03").and_then(|()| stdin.flush());
        }
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn ctrl_c_on_make_demo_in_a_terminal_leaves_no_process_of_it(pool: MySqlPool) {
    let redis = support::TestRedis::new("demo").await;
    let demo = Demo::start(&pool, &redis).await;
    demo.ctrl_c();
    // The key prefix (the marker) lives until here; its keys go with it.
    drop(redis);
}

/// Units of `product` in the demo buyers' orders, whatever became of them since (the load
/// generator's idempotency keys start with `load-`).
async fn units_bought_by_the_demo(pool: &MySqlPool, product: u64) -> i64 {
    sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(buy_count), 0) AS SIGNED) FROM orders WHERE product_id = ? AND idempotency_key LIKE 'load-%'",
    )
    .bind(product)
    .fetch_one(pool)
    .await
    .unwrap()
}

#[sqlx::test(migrations = "./migrations")]
async fn the_seed_leaves_each_product_of_the_demo_more_stock_than_its_unpaid_orders_can_hold(pool: MySqlPool) {
    let redis = support::TestRedis::new("demo-plan").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    stockguard_engine::sandbox::seed(&conns, &mut |_| {}).await.expect("seed");
    let mut r = conns.redis.clone();
    let readings = read_products(&conns.mysql, &mut r, &conns.keys, DEMO_TRAFFIC.products).await.unwrap();
    assert_eq!(readings.len(), DEMO_TRAFFIC.products.len());
    for reading in readings {
        // Units on sale now; those in flight and pending release come back on top.
        let on_sale = reading.redis_stock.expect("the demo buys products with a stock key");
        assert_eq!(reading.status, DriftStatus::Ok, "the demo buys healthy products: {}", reading.product_id);
        assert!(
            DEMO_TRAFFIC.keeps_selling_with(on_sale),
            "product {} has {on_sale} units on sale, and the demo's buyers hold up to {} unpaid at once: it would sell out",
            reading.product_id,
            DEMO_TRAFFIC.units_held_at_most()
        );
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn a_demo_sells_more_of_its_first_product_than_it_had_on_sale_and_its_reading_stays_exact(pool: MySqlPool) {
    let redis = support::TestRedis::new("demo-sells").await;
    let demo = Demo::start(&pool, &redis).await;
    let first = DEMO_TRAFFIC.products[0];
    // What the seed left on sale, at most: the initial stock less the units of paid orders,
    // which never come back (the demo's buyers never pay, so every paid order is the seed's).
    let on_sale_at_most: i64 = sqlx::query_scalar(
        "SELECT CAST(i.initial_stock - COALESCE((SELECT SUM(buy_count) FROM orders o \
                                                 WHERE o.product_id = i.product_id AND o.status = 'PAID'), 0) AS SIGNED) \
         FROM inventory i WHERE i.product_id = ?",
    )
    .bind(first)
    .fetch_one(&pool)
    .await
    .unwrap();
    // Bought past that, and still buying: units the demo's own unpaid orders gave back were
    // sold again. Without the pay window, the product sells out at about `on_sale_at_most`.
    let per_second = DEMO_TRAFFIC.rate_per_product();
    let within = Duration::from_secs_f64(on_sale_at_most as f64 / per_second * 2.0 + 60.0);
    let target = on_sale_at_most + 2 * per_second.ceil() as i64;
    let deadline = Instant::now() + within;
    loop {
        let bought = units_bought_by_the_demo(&pool, first).await;
        if bought > target {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "after {within:?} the demo's buyers have {bought} units of {first}, which had at most {on_sale_at_most} on sale: \
             it sold out\nthe terminal said:\n{}",
            demo.said()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // The sale is exact while the demo runs: the demo itself makes no drift.
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    let mut r = conns.redis.clone();
    for reading in read_products(&conns.mysql, &mut r, &conns.keys, DEMO_TRAFFIC.products).await.unwrap() {
        assert_eq!(reading.status, DriftStatus::Ok, "{reading:?}");
        assert!(reading.redis_stock.unwrap_or(0) > 0, "still on sale: {reading:?}");
    }
    demo.ctrl_c();
    drop(redis);
}
