//! A sale with the reference engine, for the root package's tests: products put on sale with
//! their stream groups, an engine serving, a reserver with a registered instance tag. Not part
//! of `support`, which the desktop crate's end-to-end test also compiles: the desktop crate
//! does not link the engine, not even in its tests (it runs the `stockguard` binary instead).

// Each test binary uses some of these.
#![allow(dead_code)]

use sqlx::MySqlPool;
use stockguard_core::connect::Connections;
use stockguard_core::keys::Keys;

/// An engine serving on 127.0.0.1:0 until the returned sender fires: its URL, the stop
/// sender and the task to await.
pub async fn spawn_engine(
    state: stockguard_engine::engine::state::EngineState,
) -> (String, tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let handle = tokio::spawn(async move {
        stockguard_engine::engine::run::serve(listener, state, async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    (url, stop, handle)
}

/// A reserver with an instance tag registered in this test's database, as an engine has.
pub async fn reserver(pool: &MySqlPool) -> stockguard_engine::engine::Reserver {
    let tag = stockguard_engine::engine::order_no::InstanceTag::claim(pool, "test")
        .await
        .expect("the DB registers the instance");
    stockguard_engine::engine::Reserver::new(tag)
}

/// A product on sale: `db_stock` units in the DB and `redis_stock` in Redis (the same, unless
/// a test starts from drift), at most `per_user_limit` per buyer, its stream group created.
pub async fn put_on_sale<C>(
    pool: &MySqlPool,
    redis: &mut C,
    keys: &Keys,
    product_id: u64,
    (db_stock, redis_stock): (i64, i64),
    per_user_limit: i64,
) where
    C: redis::aio::ConnectionLike + Send,
{
    sqlx::query(
        "INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit) VALUES (?, 'on sale', ?, ?, ?)",
    )
    .bind(product_id)
    .bind(db_stock)
    .bind(db_stock)
    .bind(per_user_limit)
    .execute(pool)
    .await
    .unwrap();
    let _: () = redis::cmd("SET").arg(keys.stock(product_id)).arg(redis_stock).query_async(redis).await.unwrap();
    stockguard_engine::engine::consumer::ensure_group(redis, keys, product_id).await.unwrap();
}

/// A product on sale: `stock` units in the DB and in Redis, its stream group created.
pub async fn open_sale(conns: &Connections, product_id: u64, stock: i64, per_user_limit: i64) {
    put_on_sale(&conns.mysql, &mut conns.redis.clone(), &conns.keys, product_id, (stock, stock), per_user_limit).await;
}

/// A test's consumer named `name`: batches of 50, orders left unpaid for ten minutes.
pub fn consumer_config(name: &str) -> stockguard_engine::engine::consumer::ConsumerConfig {
    stockguard_engine::engine::consumer::ConsumerConfig {
        name: name.into(),
        batch_size: 50,
        claim_min_idle: std::time::Duration::from_secs(60),
        payment_timeout: std::time::Duration::from_secs(600),
    }
}

/// Runs the consumers over `product` until nothing is in flight (50 passes at most).
pub async fn persist_all(conns: &Connections, product: u64) {
    use stockguard_engine::engine::consumer;
    let cfg = consumer_config("tests");
    let mut r = conns.redis.clone();
    consumer::ensure_group(&mut r, &conns.keys, product).await.unwrap();
    for _ in 0..50 {
        consumer::run_once(&conns.mysql, &mut r, &conns.keys, &[product], &cfg).await.unwrap();
        let left: i64 = redis::cmd("HLEN").arg(conns.keys.inflight(product)).query_async(&mut r).await.unwrap();
        if left == 0 {
            return;
        }
    }
    panic!("reservations still in flight after 50 passes");
}

/// The product's stock in the DB.
pub async fn db_stock(pool: &MySqlPool, product: u64) -> i64 {
    sqlx::query_scalar("SELECT CAST(stock AS SIGNED) FROM inventory WHERE product_id = ?")
        .bind(product)
        .fetch_one(pool)
        .await
        .unwrap()
}

/// Buyer `user` asks for one unit of `product` (idempotency key `k{user}`).
pub fn one_unit(user: u64, product: u64, per_user_limit: i64) -> stockguard_engine::engine::ReserveRequest {
    stockguard_engine::engine::ReserveRequest {
        user_id: user,
        product_id: product,
        qty: 1,
        idempotency_key: format!("k{user}"),
        per_user_limit,
    }
}
