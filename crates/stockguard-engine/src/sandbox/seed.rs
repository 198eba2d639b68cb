//! The demo sale: about twenty products of different sizes, orders in every state, in-flight
//! reservations and pending releases, and one product in each drift status of the contract,
//! so that every screen has something real to show.
//!
//! Seeding replaces the demo products (ids 1001-1020) and their Redis keys, and nothing
//! else; it refuses any environment but a sandbox, and leaves an audit record.

use chrono::{Duration, Utc};
use redis::AsyncCommands as _;
use serde::Serialize;

use super::SandboxError;
use stockguard_core::audit::{self, AuditEntry};
use stockguard_core::connect::Connections;
use stockguard_core::keys::PERSIST_GROUP;
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::recon::DriftStatus;
use stockguard_core::reservation::ReservationMessage;

/// What a demo product is seeded to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DemoProduct {
    pub id: u64,
    pub name: &'static str,
    pub initial_stock: i64,
    pub status: DriftStatus,
}

const fn p(id: u64, name: &'static str, initial_stock: i64, status: DriftStatus) -> DemoProduct {
    DemoProduct { id, name, initial_stock, status }
}

use DriftStatus::{KeyMissing, LedgerMismatch, Oversold, RedisHigh, RedisLow};
const OK: DriftStatus = DriftStatus::Ok;

/// The demo sale's products and the status each is seeded into.
pub const DEMO_PRODUCTS: [DemoProduct; 20] = [
    p(1001, "Limited sneakers 限量球鞋", 1000, OK),
    p(1002, "Mechanical keyboard 机械键盘", 500, OK),
    p(1003, "Flagship phone 旗舰手机", 5000, OK),
    p(1004, "Wireless earbuds 无线耳机", 2000, OK),
    p(1005, "Collector figure 收藏手办", 50, OK),
    p(1006, "Coffee beans 咖啡豆", 3000, OK),
    p(1007, "Smart watch 智能手表", 800, OK),
    p(1008, "Designer bag 设计师手袋", 20, OK),
    p(1009, "Game console 游戏主机", 300, OK),
    p(1010, "Tea set 茶具套装", 150, OK),
    p(1011, "Concert ticket 演唱会门票", 1200, OK),
    p(1012, "Mooncake box 月饼礼盒", 2500, OK),
    p(1013, "Camera lens 相机镜头", 100, OK),
    p(1014, "Sold-out poster 绝版海报", 10, OK),
    p(1015, "Electric scooter 电动滑板车", 400, OK),
    p(1016, "Trading cards 集换式卡牌", 600, RedisHigh),
    p(1017, "Running shoes 跑鞋", 700, RedisLow),
    p(1018, "Perfume 香水", 250, KeyMissing),
    p(1019, "Backpack 双肩包", 350, LedgerMismatch),
    p(1020, "Gold coin 纪念金币", 50, Oversold),
];

/// Drift seeded into the REDIS_HIGH and REDIS_LOW products, and the hand edit of the
/// LEDGER_MISMATCH product's stock.
pub const SEEDED_REDIS_HIGH: i64 = 7;
pub const SEEDED_REDIS_LOW: i64 = -5;
pub const SEEDED_LEDGER_EDIT: i64 = -4;
/// Units sold beyond initial stock in the OVERSOLD product.
pub const SEEDED_OVERSOLD: i64 = 3;

#[derive(Debug, Clone, Serialize)]
pub struct SeedReport {
    pub products: usize,
    pub orders: usize,
    pub inflight: usize,
    pub pending_releases: usize,
    pub audit_id: u64,
}

/// A small deterministic generator, so the demo looks the same every time.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, bound: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % bound
    }
}

struct SeedOrder {
    order_no: String,
    user_id: u64,
    qty: i64,
    status: &'static str,
    deadline_offset_s: i64,
}

/// Loads the demo sale into a sandbox connection.
pub async fn seed(conns: &Connections, progress: &mut dyn FnMut(&str)) -> Result<SeedReport, SandboxError> {
    if conns.settings.environment != EnvironmentKind::Sandbox {
        return Err(SandboxError::NotSandbox(conns.settings.environment));
    }
    let pool = &conns.mysql;
    let mut redis = conns.redis.clone();
    let keys = &conns.keys;
    let ids: Vec<String> = DEMO_PRODUCTS.iter().map(|d| d.id.to_string()).collect();
    let id_list = ids.join(",");

    progress("clearing the demo products");
    let mut tx = pool.begin().await?;
    for table in ["orders", "outbox", "inventory"] {
        sqlx::query(&format!("DELETE FROM {table} WHERE product_id IN ({id_list})")).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    for d in &DEMO_PRODUCTS {
        let _: () = redis.del(keys.all_for_product(d.id)).await?;
    }

    let mut rng = Lcg(20261129);
    let now = Utc::now();
    let (mut n_orders, mut n_inflight, mut n_pending) = (0, 0, 0);
    for d in &DEMO_PRODUCTS {
        progress(&format!("seeding {} {}", d.id, d.name));
        let per_user_limit = 2;
        let mut orders = Vec::new();
        let mut seq = 0u64;
        let mut add = |status: &'static str, units: i64, orders: &mut Vec<SeedOrder>, rng: &mut Lcg| {
            let mut left = units;
            while left > 0 {
                let qty = (1 + rng.next(per_user_limit as u64) as i64).min(left);
                seq += 1;
                orders.push(SeedOrder {
                    order_no: format!("D{}-{:06}", d.id, seq),
                    user_id: d.id * 1_000_000 + seq,
                    qty,
                    status,
                    deadline_offset_s: if status == "WAIT_PAY" {
                        60 + rng.next(840) as i64
                    } else {
                        -600 - rng.next(3000) as i64
                    },
                });
                left -= qty;
            }
        };
        let initial = d.initial_stock;
        if d.status == Oversold {
            add("PAID", initial + SEEDED_OVERSOLD, &mut orders, &mut rng);
        } else if d.id == 1014 {
            add("PAID", initial, &mut orders, &mut rng);
        } else {
            add("PAID", initial * 35 / 100, &mut orders, &mut rng);
            add("WAIT_PAY", initial * 20 / 100, &mut orders, &mut rng);
            add("CLOSED", (initial * 6 / 100).max(1), &mut orders, &mut rng);
            add("CANCELLED", (initial * 3 / 100).max(1), &mut orders, &mut rng);
        }
        let live: i64 = orders.iter().filter(|o| o.status == "WAIT_PAY" || o.status == "PAID").map(|o| o.qty).sum();
        let true_stock = initial - live;
        let db_stock = if d.status == LedgerMismatch { true_stock + SEEDED_LEDGER_EDIT } else { true_stock };

        let mut tx = pool.begin().await?;
        sqlx::query("INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit, price_cents) VALUES (?, ?, ?, ?, ?, ?)")
            .bind(d.id)
            .bind(d.name)
            .bind(initial)
            .bind(db_stock)
            .bind(per_user_limit)
            .bind(1000 + rng.next(90000) as i64)
            .execute(&mut *tx)
            .await?;
        for chunk in orders.chunks(500) {
            let mut qb = sqlx::QueryBuilder::<sqlx::MySql>::new(
                "INSERT INTO orders (order_no, user_id, product_id, buy_count, status, idempotency_key, pay_deadline, created_at) ",
            );
            qb.push_values(chunk, |mut b, o| {
                let deadline = now + Duration::seconds(o.deadline_offset_s);
                b.push_bind(&o.order_no)
                    .push_bind(o.user_id)
                    .push_bind(d.id)
                    .push_bind(o.qty)
                    .push_bind(o.status)
                    .push_bind(format!("seed-{}", o.order_no))
                    .push_bind(deadline.naive_utc())
                    .push_bind((deadline - Duration::minutes(15)).naive_utc());
            });
            qb.build().execute(&mut *tx).await?;
        }
        // Half of the closed orders' releases are still pending (returned to the DB, not
        // yet to Redis); the other half were applied.
        let closed: Vec<&SeedOrder> = orders.iter().filter(|o| o.status == "CLOSED").collect();
        let mut pending_release = 0;
        let mut released = Vec::new();
        for (i, o) in closed.iter().enumerate() {
            let pending = i.is_multiple_of(2) && d.status != Oversold;
            sqlx::query("INSERT INTO outbox (product_id, order_no, qty, status, done_at) VALUES (?, ?, ?, ?, ?)")
                .bind(d.id)
                .bind(&o.order_no)
                .bind(o.qty)
                .bind(if pending { "PENDING" } else { "DONE" })
                .bind(if pending { None } else { Some(now.naive_utc()) })
                .execute(&mut *tx)
                .await?;
            if pending {
                pending_release += o.qty;
                n_pending += 1;
            } else {
                released.push(o.order_no.clone());
            }
        }
        tx.commit().await?;
        n_orders += orders.len();

        // Redis: buyers of live orders, a few reservations still in flight (with their
        // stream messages), and the stock key.
        let mut pipe = redis::pipe();
        for o in orders.iter().filter(|o| o.status == "WAIT_PAY" || o.status == "PAID") {
            pipe.hincr(keys.buyers(d.id), o.user_id, o.qty).ignore();
        }
        // Releases applied before the sale's sequence started count as sequence 0.
        for no in &released {
            pipe.hset(keys.released(d.id), no, 0).ignore();
        }
        pipe.cmd("XGROUP")
            .arg("CREATE")
            .arg(keys.orders_stream(d.id))
            .arg(PERSIST_GROUP)
            .arg("0")
            .arg("MKSTREAM")
            .ignore();
        let inflight_count = if true_stock - pending_release >= 10 && d.status == OK { 3 } else { 0 };
        let mut inflight = 0;
        for i in 0..inflight_count {
            let msg = ReservationMessage {
                order_no: format!("D{}-F{:03}", d.id, i + 1),
                user_id: d.id * 1_000_000 + 900_000 + i,
                product_id: d.id,
                qty: 1,
                idempotency_key: format!("seed-inflight-{}-{}", d.id, i),
                reserved_at_ms: now.timestamp_millis(),
                seq: i + 1,
                epoch: 0,
            };
            pipe.hset(keys.inflight(d.id), &msg.order_no, msg.qty).ignore();
            pipe.hincr(keys.buyers(d.id), msg.user_id, msg.qty).ignore();
            pipe.xadd(keys.orders_stream(d.id), "*", &msg.to_fields()).ignore();
            pipe.set(keys.seq(d.id), msg.seq).ignore();
            inflight += msg.qty;
            n_inflight += 1;
        }
        let expected = db_stock - inflight - pending_release;
        let redis_stock = match d.status {
            RedisHigh => Some(expected + SEEDED_REDIS_HIGH),
            RedisLow => Some(expected + SEEDED_REDIS_LOW),
            KeyMissing => None,
            Oversold => Some(0),
            _ => Some(expected),
        };
        if let Some(stock) = redis_stock {
            pipe.set(keys.stock(d.id), stock).ignore();
        }
        let _: () = pipe.query_async(&mut redis).await?;
    }

    let audit_id = audit::record(
        pool,
        &AuditEntry::by(
            &conns.settings,
            "sandbox.seed",
            &format!("products {}-{}", DEMO_PRODUCTS[0].id, DEMO_PRODUCTS[DEMO_PRODUCTS.len() - 1].id),
            "load the demo sale",
            "OK",
            serde_json::json!({ "products": DEMO_PRODUCTS.len(), "orders": n_orders }),
        ),
    )
    .await?;
    Ok(SeedReport {
        products: DEMO_PRODUCTS.len(),
        orders: n_orders,
        inflight: n_inflight,
        pending_releases: n_pending,
        audit_id,
    })
}
