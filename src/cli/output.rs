//! Printing: aligned tables for people, JSON for scripts.
//!
//! Everything the CLI prints on standard output goes through [`say!`]: when the reader
//! closes the pipe (`stockguard recon --json | head`), the program ends quietly, as Unix
//! tools do, instead of panicking on the failed write. (Restoring the default SIGPIPE would
//! do the same for the CLI but would also let a client closing its socket kill the engine
//! the same binary serves.)

/// `println!` for the CLI's output (see the module docs).
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::cli::output::write_line(format_args!($($arg)*))
    };
}
pub(crate) use say;

/// Writes one line to standard output; a closed pipe ends the program with success.
pub fn write_line(line: std::fmt::Arguments) {
    write_text(&format!("{line}\n"));
}

/// Writes `text` as it is to standard output (and flushes it); a closed pipe ends the
/// program with success.
pub fn write_text(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        panic!("failed printing to stdout: {e}");
    }
}

use stockguard_core::catalog::Product;
use stockguard_core::recon::Reading;

pub fn json<T: serde::Serialize>(value: &T) {
    say!("{}", serde_json::to_string_pretty(value).expect("output serializes"));
}

pub fn products(products: &[Product], as_json: bool) {
    if as_json {
        return json(&products);
    }
    say!("{:>10}  {:>8}  {:>8}  {:>5}  name", "product", "initial", "stock", "limit");
    for p in products {
        say!("{:>10}  {:>8}  {:>8}  {:>5}  {}", p.product_id, p.initial_stock, p.stock, p.per_user_limit, p.name);
    }
}

fn opt(v: Option<i64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// One line per `UNSETTLED` product of a reading over an adapter (what waits in flight and why
/// its drift is no verdict), and per `KEY_UNREADABLE` one (the key and what it holds).
pub fn unsettled_lines(readings: &[stockguard_core::adapter::AdapterReading]) -> String {
    let mut out = String::new();
    let unsettled = stockguard_core::recon::DriftStatus::Unsettled;
    for r in readings.iter().filter(|r| r.reading.status == unsettled) {
        let why = r.unsettled.as_ref().map_or_else(|| "not settled".to_string(), ToString::to_string);
        out.push_str(&format!(
            "product {}: UNSETTLED, {} in flight: {why}; no drift verdict\n",
            r.reading.product_id, r.reading.in_flight
        ));
    }
    for (r, bad) in readings.iter().filter_map(|r| r.unreadable.as_ref().map(|u| (r, u))) {
        out.push_str(&format!(
            "product {}: KEY_UNREADABLE: {} holds {:?}, not a whole number of units (at most 10^15); the sale \
             cannot sell it from Redis (rewrite the key from the DB)\n",
            r.reading.product_id, bad.key, bad.value
        ));
    }
    out
}

pub fn readings_table(readings: &[Reading]) -> String {
    let mut out = format!(
        "{:>8}  {:<16} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>6}  name\n",
        "product", "status", "initial", "db", "live", "inflight", "release", "redis", "expected", "drift"
    );
    for r in readings {
        out.push_str(&format!(
            "{:>8}  {:<16} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>6}  {}\n",
            r.product_id,
            r.status.as_str(),
            r.initial_stock,
            r.db_stock,
            r.live_orders_qty,
            // An unsettled product (over an adapter) shows all it has waiting, attributed or not.
            if r.settled { r.inflight_pending } else { r.in_flight },
            r.pending_release,
            opt(r.redis_stock),
            r.expected_redis,
            opt(r.drift),
            r.name
        ));
    }
    out
}
