//! Printing: aligned tables for people, JSON for scripts.

use stockguard::catalog::Product;
use stockguard::recon::Reading;

pub fn json<T: serde::Serialize>(value: &T) {
    println!("{}", serde_json::to_string_pretty(value).expect("output serializes"));
}

pub fn products(products: &[Product], as_json: bool) {
    if as_json {
        return json(&products);
    }
    println!("{:>10}  {:>8}  {:>8}  {:>5}  name", "product", "initial", "stock", "limit");
    for p in products {
        println!("{:>10}  {:>8}  {:>8}  {:>5}  {}", p.product_id, p.initial_stock, p.stock, p.per_user_limit, p.name);
    }
}

fn opt(v: Option<i64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
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
            r.inflight_pending,
            r.pending_release,
            opt(r.redis_stock),
            r.expected_redis,
            opt(r.drift),
            r.name
        ));
    }
    out
}
