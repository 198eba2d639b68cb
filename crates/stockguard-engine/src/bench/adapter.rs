//! An exact reading over an adapter (issue 28): all the products of a sale shaped like the
//! widely copied Java course sale (units left in `tb_seckill_voucher`, orders in
//! `tb_voucher_order`, Redis `seckill:stock:${id}`, one stream `stream.orders` read by the
//! group `g1`) read through its adapter file, beside our own exact reading of a native sale of
//! the same size, in alternating rounds of one run; the medians and their ratio.
//!
//! Both sales hold the same: `N` products of 100 units, 20 orders each (14 live, 6 released),
//! and one product in ten with two orders in flight: one not yet a row (its unit taken in
//! Redis only) and one whose row is written but not yet acknowledged (counted once). The
//! native in-flight entries sit in `sg:{P}:inflight`; the course sale's in its stream, the
//! first half delivered to a consumer and not acknowledged (its pending list), the rest not
//! yet delivered. Before them the stream holds what a stream sale keeps until it is trimmed:
//! an entry for every order, delivered and acknowledged, which the reading's lost-orders scan
//! reads (the newest 10,000 delivered) and looks up among the rows; none may be lost. The course sale's initial stock is `"baseline"`, handed to the reading as
//! recorded (initial = 100).
//!
//! The adapter file is written to a temporary file and loaded as a user's would be, with
//! `[sale] settle_ms = 0`: the pause between the reading's two passes is a wait the file
//! chooses (1 s by default), not work, and would swamp the comparison; a reading with the
//! default pause takes that second more. Both readings must be right in every round (every
//! product `OK`, settled, and the in-flight units counted once), or the bench fails.
//!
//! It works in a [`ScratchDatabase`] of its own (both sales' tables, side by side) and under
//! a key prefix of its own, and leaves neither behind.

use std::collections::HashMap;
use std::io::Write as _;
use std::time::Instant;

use redis::Value;
use sqlx::MySqlPool;

use super::{BenchError, BenchReport, Figure, ScratchDatabase};
use stockguard_core::adapter::{self, AdapterFile, AdapterReading, SaleLinks};
use stockguard_core::connect::Connections;
use stockguard_core::keys::Keys;
use stockguard_core::recon::reading::{read_products_timed, ReadTimings};
use stockguard_core::recon::{DriftStatus, Reading};
use stockguard_core::redis_link::{per_item, per_product, slot, RedisLink};
use stockguard_core::ProductId;

/// Units per product at the start of the sale.
const INITIAL: i64 = 100;
/// Orders per product: the first 14 live, the last 6 released.
const ORDERS: i64 = 20;
const LIVE: i64 = 14;
/// One product in this many has orders in flight.
const INFLIGHT_EVERY: u64 = 10;

/// What to run: `products` per sale, `rounds` of both readings.
#[derive(Debug, Clone, Copy)]
pub struct AdapterPlan {
    pub products: u64,
    pub rounds: u32,
}

impl AdapterPlan {
    /// 5,000 products, 3 rounds; quick: 50 products, 1 round.
    pub fn new(quick: bool) -> Self {
        if quick {
            Self { products: 50, rounds: 1 }
        } else {
            Self { products: 5_000, rounds: 3 }
        }
    }
}

/// The course sale's tables, as the course builds them.
const COURSE_DDL: &[&str] = &[
    "CREATE TABLE tb_seckill_voucher (voucher_id BIGINT PRIMARY KEY, stock INT NOT NULL, \
     create_time DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP) ENGINE=InnoDB",
    "CREATE TABLE tb_voucher_order (id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, voucher_id BIGINT NOT NULL, \
     status TINYINT NOT NULL DEFAULT 1, create_time DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP, \
     KEY idx_voucher (voucher_id)) ENGINE=InnoDB",
];

/// The course sale's adapter file, for keys under `prefix`.
fn course_adapter(prefix: &str) -> String {
    format!(
        r#"[sale]
name = "bench-course-stream"
settle_ms = 0

[stock]
table = "tb_seckill_voucher"
product = "voucher_id"
remaining = "stock"
initial = "baseline"

[orders]
table = "tb_voucher_order"
product = "voucher_id"
quantity = 1
status = "status"
live = [1, 2, 3, 5]
released = [4, 6]
reserving = []
order_id = "id"
created = "create_time"
user = "user_id"

[redis]
stock = "{prefix}:seckill:stock:${{id}}"

[inflight]
source = "redis_stream"
stream = "{prefix}:stream.orders"
group = "g1"
product_field = "voucherId"
order_id_field = "id"
"#
    )
}

/// The `adapter` benchmark.
pub async fn run(
    conns: &Connections,
    plan: &AdapterPlan,
    progress: &mut dyn FnMut(&str),
) -> Result<BenchReport, BenchError> {
    let scratch = ScratchDatabase::create(&conns.settings, "adapter").await?;
    let prefix = format!("{}:benchadapter{:x}", conns.keys.prefix(), rand::random::<u32>());
    let sales =
        Sales { native: Keys::new(format!("{prefix}:native")), course: format!("{prefix}:course"), n: plan.products };
    let result = measure(&scratch, conns, &sales, plan, progress).await;
    let removed = sales.remove_keys(&conns.redis).await;
    let (mut report, dropped) = scratch.drop_after(result).await?;
    report.notes.push(format!("Redis keys under {prefix}: {} (removed)", removed?));
    report.notes.push(dropped);
    Ok(report)
}

/// The two sales' key names.
struct Sales {
    native: Keys,
    /// The course sale's key prefix.
    course: String,
    n: u64,
}

impl Sales {
    fn ids(&self) -> Vec<u64> {
        (1..=self.n).collect()
    }

    fn course_stock(&self, id: u64) -> String {
        format!("{}:seckill:stock:{id}", self.course)
    }

    fn stream(&self) -> String {
        format!("{}:stream.orders", self.course)
    }

    /// Every key either sale may hold; returns how many existed.
    async fn remove_keys(&self, redis: &RedisLink) -> Result<i64, BenchError> {
        let mut keys: Vec<String> = self.ids().iter().flat_map(|&id| self.native.all_for_product(id)).collect();
        keys.extend(self.ids().iter().map(|&id| self.course_stock(id)));
        keys.push(self.stream());
        let replies = per_item(
            redis,
            &keys,
            |k| slot(k.as_bytes()),
            |pipe, k| {
                pipe.cmd("UNLINK").arg(k);
            },
        )
        .await?;
        Ok(replies.iter().flatten().map(|v| redis::from_redis_value::<i64>(v).unwrap_or(0)).sum())
    }
}

/// Products with orders in flight.
fn in_flight(id: u64) -> bool {
    id.is_multiple_of(INFLIGHT_EVERY)
}

async fn measure(
    scratch: &ScratchDatabase,
    conns: &Connections,
    sales: &Sales,
    plan: &AdapterPlan,
    progress: &mut dyn FnMut(&str),
) -> Result<BenchReport, BenchError> {
    let n = plan.products;
    let pool = scratch.migrated_pool().await?;
    progress(&format!("two sales of {n} products, {} orders each", n * ORDERS as u64));
    seed_native(&pool, &conns.redis, sales).await?;
    seed_course(&pool, &conns.redis, sales).await?;
    sqlx::query("ANALYZE TABLE orders, tb_voucher_order").execute(&pool).await?;

    let mut file_on_disk = tempfile::Builder::new()
        .prefix("bench-adapter-")
        .suffix(".toml")
        .tempfile()
        .map_err(|e| BenchError::Engine(format!("cannot write the adapter file to a temporary file: {e}")))?;
    file_on_disk
        .write_all(course_adapter(&sales.course).as_bytes())
        .map_err(|e| BenchError::Engine(format!("cannot write the adapter file to a temporary file: {e}")))?;
    let file = AdapterFile::load(file_on_disk.path()).map_err(adapter::AdapterError::from)?;
    let baselines: HashMap<ProductId, i64> = sales.ids().into_iter().map(|id| (id.into(), INITIAL)).collect();
    let links = SaleLinks { db: Some(&pool), redis: Some(&conns.redis) };
    let expect = Expected::of(n);

    // One unmeasured reading of each first: the script loaded, the pages warm.
    progress("warm-up readings");
    let mut redis = conns.redis.clone();
    let (native, _) = read_products_timed(&pool, &mut redis, &sales.native, &[], None).await?;
    let mut native_seen = expect.native(&native)?;
    let mut adapter_seen = expect.adapter(&adapter::read(&file, &links, &baselines, &[]).await?)?;

    let mut native_ms = Vec::new();
    let mut native_parts: Vec<ReadTimings> = Vec::new();
    let mut adapter_ms = Vec::new();
    for round in 0..plan.rounds {
        // Alternate which goes first, so neither always reads after the other.
        for native_turn in if round % 2 == 0 { [true, false] } else { [false, true] } {
            let t = Instant::now();
            if native_turn {
                let (readings, parts) = read_products_timed(&pool, &mut redis, &sales.native, &[], None).await?;
                native_ms.push(ms(t));
                native_parts.push(parts);
                native_seen = expect.native(&readings)?;
            } else {
                let readings = adapter::read(&file, &links, &baselines, &[]).await?;
                adapter_ms.push(ms(t));
                adapter_seen = expect.adapter(&readings)?;
            }
        }
        progress(&format!(
            "round {}: native {:.1} ms, adapter {:.1} ms",
            round + 1,
            native_ms.last().copied().unwrap_or_default(),
            adapter_ms.last().copied().unwrap_or_default()
        ));
    }
    let ids: Vec<ProductId> = sales.ids().into_iter().map(ProductId::from).collect();
    let passes = one_pass_parts(&file, &pool, &conns.redis, &ids, plan.rounds).await?;
    pool.close().await;

    let rounds = plan.rounds;
    let (native, adapter) = (median(native_ms), median(adapter_ms));
    let figures = vec![
        Figure::new("products per sale", n as f64, "products"),
        Figure::new("orders per sale", (n * ORDERS as u64) as f64, "orders"),
        Figure::new(&format!("native reading, all products (median of {rounds})"), native, "ms"),
        Figure::new("  of which DB", median(native_parts.iter().map(|t| t.db_ms).collect()), "ms"),
        Figure::new("  of which Redis", median(native_parts.iter().map(|t| t.redis_ms).collect()), "ms"),
        Figure::new(&format!("adapter reading, all products, 2 passes (median of {rounds})"), adapter, "ms"),
        Figure::new("  one pass: DB statement", passes.db, "ms"),
        Figure::new("  one pass: Redis stock keys", passes.redis, "ms"),
        Figure::new("  one pass: stream, pending and undelivered", passes.stream, "ms"),
        Figure::new("  once: lost-orders scan (newest 10,000 delivered entries)", passes.lost, "ms"),
        Figure::new("native reading: products OK", native_seen.ok as f64, "products"),
        Figure::new("adapter reading: products OK and settled", adapter_seen.ok as f64, "products"),
        Figure::new("in-flight units counted once, native", native_seen.pending as f64, "units"),
        Figure::new("in-flight units counted once, adapter", adapter_seen.pending as f64, "units"),
    ];
    let ratios = vec![Figure::new("adapter reading / native reading", adapter / native, "")];
    let notes = vec![
        format!(
            "both sales: {n} products of {INITIAL} units, {ORDERS} orders each ({LIVE} live); one product in \
             {INFLIGHT_EVERY} with two orders in flight (one not yet a row, one a row not yet acknowledged)"
        ),
        format!(
            "the adapter's stream holds {} acknowledged entries (one per order) and {} in flight: {} pending \
             (delivered, not acknowledged), {} undelivered; no order lost",
            n * ORDERS as u64,
            expect.entries,
            expect.entries / 2,
            expect.entries - expect.entries / 2
        ),
        "adapter file: the course shape with settle_ms = 0 (the default 1 s pause between the two passes is \
         a wait, not work: a reading with it takes that second more)"
            .into(),
        "every reading of every round: every product OK (adapter: and settled), in-flight units counted once".into(),
    ];
    Ok(BenchReport { bench: "adapter".into(), figures, ratios, notes })
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs.get(xs.len() / 2).copied().unwrap_or_default()
}

/// Where one pass of the adapter reading spends its time, each part timed alone (medians of
/// `rounds`); a reading is two passes and the in-flight ids looked up among the rows.
struct PassParts {
    db: f64,
    redis: f64,
    stream: f64,
    /// The lost-orders scan, once a reading (after its second pass).
    lost: f64,
}

async fn one_pass_parts(
    file: &AdapterFile,
    pool: &MySqlPool,
    redis: &RedisLink,
    ids: &[ProductId],
    rounds: u32,
) -> Result<PassParts, BenchError> {
    let section = file.redis.as_ref().expect("the course file has [redis]");
    let (mut db, mut rd, mut stream, mut lost) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let links = SaleLinks { db: Some(pool), redis: Some(redis) };
    for _ in 0..rounds {
        let t = Instant::now();
        adapter::db::read_rows(pool, file, adapter::db::Products::Every(ids)).await?;
        db.push(ms(t));
        let t = Instant::now();
        adapter::redis_side::read_stock(redis, section, ids).await?;
        rd.push(ms(t));
        let t = Instant::now();
        adapter::inflight::read(file, Some(redis), ids).await?;
        stream.push(ms(t));
        let t = Instant::now();
        adapter::lost::scan(file, &links, ids, &adapter::lost::LostOptions::default()).await?;
        lost.push(ms(t));
    }
    Ok(PassParts { db: median(db), redis: median(rd), stream: median(stream), lost: median(lost) })
}

/// What a right reading of either sale says.
struct Expected {
    n: u64,
    /// Stream entries (two per product in flight).
    entries: i64,
}

impl Expected {
    fn of(n: u64) -> Self {
        let flying = (1..=n).filter(|&id| in_flight(id)).count() as i64;
        Self { n, entries: 2 * flying }
    }

    fn check(&self, reading: &'static str, readings: &[&Reading], settled: bool) -> Result<(), BenchError> {
        let wrong = |detail: String| BenchError::WrongReading { reading, detail };
        if readings.len() as u64 != self.n {
            return Err(wrong(format!("{} products read of {}", readings.len(), self.n)));
        }
        if let Some(r) = readings.iter().find(|r| r.status != DriftStatus::Ok || r.drift != Some(0)) {
            return Err(wrong(format!(
                "product {} reads {:?} (drift {:?}) on a clean sale",
                r.product_id, r.status, r.drift
            )));
        }
        if settled {
            if let Some(r) = readings.iter().find(|r| !r.settled) {
                return Err(wrong(format!("product {} is not settled on a still sale", r.product_id)));
            }
        }
        let expected_pending = |r: &Reading| i64::from(r.product_id.as_num().is_some_and(in_flight));
        if let Some(r) = readings.iter().find(|r| r.inflight_pending != expected_pending(r)) {
            return Err(wrong(format!(
                "product {} counts {} unit(s) in flight, not {}",
                r.product_id,
                r.inflight_pending,
                expected_pending(r)
            )));
        }
        if let Some(r) = readings.iter().find(|r| r.live_orders_qty != LIVE || r.initial_stock != INITIAL) {
            return Err(wrong(format!(
                "product {} reads {} live of initial {}, not {LIVE} of {INITIAL}",
                r.product_id, r.live_orders_qty, r.initial_stock
            )));
        }
        Ok(())
    }

    fn native(&self, readings: &[Reading]) -> Result<Seen, BenchError> {
        let readings: Vec<&Reading> = readings.iter().collect();
        self.check("native", &readings, false)?;
        Ok(Seen::of(&readings))
    }

    fn adapter(&self, readings: &[AdapterReading]) -> Result<Seen, BenchError> {
        let plain: Vec<&Reading> = readings.iter().map(|r| &r.reading).collect();
        self.check("adapter", &plain, true)?;
        if let Some(r) = readings.iter().find(|r| r.lost.as_ref().is_none_or(|l| l.count > 0)) {
            return Err(BenchError::WrongReading {
                reading: "adapter",
                detail: format!("product {} reads lost orders {:?} on a clean sale", r.reading.product_id, r.lost),
            });
        }
        let entries: i64 = readings.iter().map(|r| r.reading.in_flight).sum();
        if entries != self.entries {
            return Err(BenchError::WrongReading {
                reading: "adapter",
                detail: format!("{entries} stream entries seen in flight, not {}", self.entries),
            });
        }
        Ok(Seen::of(&plain))
    }
}

/// What a reading found, for the report: products `OK` (and settled), units in flight.
#[derive(Default, Clone, Copy)]
struct Seen {
    ok: usize,
    pending: i64,
}

impl Seen {
    fn of(readings: &[&Reading]) -> Self {
        Self {
            ok: readings.iter().filter(|r| r.status == DriftStatus::Ok && r.settled).count(),
            pending: readings.iter().map(|r| r.inflight_pending).sum(),
        }
    }
}

/// Orders put in the stream per pipeline while seeding its history.
const HISTORY_CHUNK: usize = 10_000;

/// An entry for every order of the sale (its rows: `id * 100 + k`), delivered to the group and
/// acknowledged, oldest first: what the order path wrote and the consumer took.
async fn acknowledged_history(r: &mut RedisLink, stream: &str, ids: &[u64]) -> Result<(), BenchError> {
    let orders: Vec<(u64, u64)> =
        ids.iter().flat_map(|&id| (0..ORDERS as u64).map(move |k| (id, id * 100 + k))).collect();
    for chunk in orders.chunks(HISTORY_CHUNK) {
        let mut pipe = redis::pipe();
        for &(id, order) in chunk {
            pipe.cmd("XADD")
                .arg(stream)
                .arg("*")
                .arg("userId")
                .arg(order)
                .arg("voucherId")
                .arg(id)
                .arg("id")
                .arg(order);
        }
        let added: Vec<String> = pipe.query_async(r).await?;
        let _: Value = redis::cmd("XREADGROUP")
            .arg("GROUP")
            .arg("g1")
            .arg("bench-consumer")
            .arg("COUNT")
            .arg(added.len())
            .arg("STREAMS")
            .arg(stream)
            .arg(">")
            .query_async(r)
            .await?;
        let acked: i64 = redis::cmd("XACK").arg(stream).arg("g1").arg(&added).query_async(r).await?;
        if acked != added.len() as i64 {
            return Err(BenchError::Engine(format!("{acked} of {} history entries acknowledged", added.len())));
        }
    }
    Ok(())
}

/// The numbers 1..=n in `bench_products` and 0..ORDERS in `bench_k`, to build rows from.
async fn numbers(pool: &MySqlPool, n: u64) -> Result<(), BenchError> {
    sqlx::query("CREATE TABLE IF NOT EXISTS bench_digits (n INT PRIMARY KEY)").execute(pool).await?;
    sqlx::query("INSERT IGNORE INTO bench_digits VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)").execute(pool).await?;
    sqlx::query("CREATE TABLE IF NOT EXISTS bench_products (n BIGINT PRIMARY KEY)").execute(pool).await?;
    sqlx::query(
        "INSERT IGNORE INTO bench_products SELECT k FROM \
         (SELECT 1 + a.n + 10*b.n + 100*c.n + 1000*d.n + 10000*e.n + 100000*f.n AS k \
          FROM bench_digits a, bench_digits b, bench_digits c, bench_digits d, bench_digits e, bench_digits f) x \
         WHERE k <= ?",
    )
    .bind(n)
    .execute(pool)
    .await?;
    sqlx::query("CREATE TABLE IF NOT EXISTS bench_k (n INT PRIMARY KEY)").execute(pool).await?;
    sqlx::query("INSERT IGNORE INTO bench_k SELECT k FROM (SELECT a.n + 10*b.n AS k FROM bench_digits a, bench_digits b) x WHERE k < ?")
        .bind(ORDERS)
        .execute(pool)
        .await?;
    Ok(())
}

/// The native sale: inventory, orders, and in Redis each product's stock and in-flight hash.
async fn seed_native(pool: &MySqlPool, redis: &RedisLink, sales: &Sales) -> Result<(), BenchError> {
    numbers(pool, sales.n).await?;
    sqlx::query(
        "INSERT INTO inventory (product_id, name, initial_stock, stock) SELECT n, 'p', ?, ? FROM bench_products",
    )
    .bind(INITIAL)
    .bind(INITIAL - LIVE)
    .execute(pool)
    .await?;
    sqlx::query(
        "INSERT INTO orders (order_no, user_id, product_id, buy_count, status, pay_deadline) \
         SELECT CONCAT('b', p.n, '-', k.n), p.n * 100 + k.n, p.n, 1, \
                CASE WHEN k.n < 10 THEN 'PAID' WHEN k.n < ? THEN 'WAIT_PAY' WHEN k.n < 17 THEN 'CLOSED' ELSE 'CANCELLED' END, \
                NOW() \
         FROM bench_products p, bench_k k",
    )
    .bind(LIVE)
    .execute(pool)
    .await?;
    let keys = &sales.native;
    per_product(redis, &sales.ids(), |pipe, id| {
        if in_flight(id) {
            // One order reserved in Redis only, and one whose row is written already.
            pipe.set(keys.stock(id), INITIAL - LIVE - 1);
            pipe.hset(keys.inflight(id), format!("b{id}-x"), 1);
            pipe.hset(keys.inflight(id), format!("b{id}-0"), 1);
        } else {
            pipe.set(keys.stock(id), INITIAL - LIVE);
        }
    })
    .await?;
    Ok(())
}

/// The course sale: its tables, its stock keys, and its stream with the group `g1`, half of
/// the entries delivered to a consumer that has not acknowledged them.
async fn seed_course(pool: &MySqlPool, redis: &RedisLink, sales: &Sales) -> Result<(), BenchError> {
    for ddl in COURSE_DDL {
        sqlx::query(ddl).execute(pool).await?;
    }
    sqlx::query("INSERT INTO tb_seckill_voucher (voucher_id, stock) SELECT n, ? FROM bench_products")
        .bind(INITIAL - LIVE)
        .execute(pool)
        .await?;
    // 1 unpaid, 2 paid, 4 cancelled, 6 refunded.
    sqlx::query(
        "INSERT INTO tb_voucher_order (id, user_id, voucher_id, status) \
         SELECT p.n * 100 + k.n, p.n * 100 + k.n, p.n, \
                CASE WHEN k.n < 10 THEN 2 WHEN k.n < ? THEN 1 WHEN k.n < 17 THEN 4 ELSE 6 END \
         FROM bench_products p, bench_k k",
    )
    .bind(LIVE)
    .execute(pool)
    .await?;
    let ids = sales.ids();
    let stock: Vec<(String, i64)> =
        ids.iter().map(|&id| (sales.course_stock(id), INITIAL - LIVE - i64::from(in_flight(id)))).collect();
    per_item(
        redis,
        &stock,
        |(k, _)| slot(k.as_bytes()),
        |pipe, (k, v)| {
            pipe.set(k, v);
        },
    )
    .await?;
    let stream = sales.stream();
    let mut r = redis.clone();
    let _: () =
        redis::cmd("XGROUP").arg("CREATE").arg(&stream).arg("g1").arg("0").arg("MKSTREAM").query_async(&mut r).await?;
    acknowledged_history(&mut r, &stream, &ids).await?;
    let mut pipe = redis::pipe();
    for &id in ids.iter().filter(|&&id| in_flight(id)) {
        // The order not yet a row (id ...99), and one whose row is written (id ...00).
        for order in [id * 100 + 99, id * 100] {
            pipe.cmd("XADD")
                .arg(&stream)
                .arg("*")
                .arg("userId")
                .arg(order)
                .arg("voucherId")
                .arg(id)
                .arg("id")
                .arg(order);
        }
    }
    let added: Vec<Value> = if pipe.is_empty() { Vec::new() } else { pipe.query_async(&mut r).await? };
    if added.len() >= 2 {
        let _: Value = redis::cmd("XREADGROUP")
            .arg("GROUP")
            .arg("g1")
            .arg("bench-consumer")
            .arg("COUNT")
            .arg(added.len() / 2)
            .arg("STREAMS")
            .arg(&stream)
            .arg(">")
            .query_async(&mut r)
            .await?;
    }
    Ok(())
}
