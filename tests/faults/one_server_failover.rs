//! The run of issue 30 on one Redis server with a replica, as `cluster_accepted` runs it on a
//! cluster: one engine with default settings (it finds the replica by itself), 2,000 buyers
//! for 400 units of one product, and the master killed (SIGKILL) once a third of the units
//! are sold, its replica lagging behind (stopped, its link dropped by the master) so that the
//! master's last writes are its alone. The replica is then promoted and the sale's Redis
//! address moved to it, as Sentinel's clients or a virtual IP move it; the engine's breaker
//! does whatever its defaults make of the moment.
//!
//! Every ACCEPTED answer is an order row or a FAILED record, nothing is oversold, the sale
//! sells on through the failover, and the reading is OK once the sale is repaired (the
//! guided exit if the breaker took the sale to the DB path, the fenced rewrite otherwise);
//! the buyers' error rate and the time to the first accepted order after the kill are
//! printed.

use crate::failover_sale::{
    assert_every_accepted_answer_kept, drop_the_replica, felt, first_accepted, redis_stock, sold_down_to, start_buyers,
    STOCK,
};
use crate::sale;
use crate::support;

use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::recon::{read_products, DriftStatus};
use stockguard_core::rewrite::{self, RewriteRequest};
use stockguard_core::switch::exit::DEFAULT_STALE_AFTER;
use stockguard_core::switch::{self, ExitOptions, Mode, Scope};
use stockguard_engine::drill::link::Link;
use stockguard_engine::engine::replicas::guarantee::Guarantee;
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use support::redis_server::RedisServer;
use support::waits::wait_for;

const P: u64 = 12;

#[sqlx::test(migrations = "./migrations")]
async fn with_default_settings_a_master_killed_mid_sale_on_one_server_loses_no_accepted_order_and_the_sale_sells_on(
    pool: MySqlPool,
) {
    let mut master = RedisServer::start().await;
    let mut replica = RedisServer::replica_of(&master).await;
    // The sale's Redis address: the master's now, the promoted replica's after the failover.
    let front = Link::start("127.0.0.1:0", format!("127.0.0.1:{}", master.port), true).await.unwrap();
    let address = front.listen();
    let conns = support::connections_to(&pool, &format!("redis://{address}/"), "osf").await;
    sale::open_sale(&conns, P, STOCK, 1).await;

    // Default settings but the per-buyer rate limit (the load's buyers are new ones anyway).
    let config = EngineConfig { per_user_rate: 0, ..EngineConfig::default() };
    let state = EngineState::new(pool.clone(), conns.redis.clone(), conns.keys.clone(), config);
    let (engine, stop, handle) = sale::spawn_engine(state.clone()).await;
    assert_eq!(state.vouching().await.guarantee(), Guarantee::Replica, "it found the replica by itself");

    let load = start_buyers(&pool, &engine, P);

    // A third sold: the replica falls behind (stopped, its link dropped by the master), the
    // master sells ten more units that are its alone, and is killed.
    sold_down_to(&conns, P, STOCK * 2 / 3).await;
    replica.pause();
    drop_the_replica(&mut master.conn().await).await;
    let cut_at = redis_stock(&conns, P).await.unwrap();
    sold_down_to(&conns, P, cut_at - 10).await;
    master.kill();
    // The replica takes over, and the sale's address moves to it.
    replica.resume();
    replica.promote().await;
    drop(front);
    let _front = Link::start(&address.to_string(), format!("127.0.0.1:{}", replica.port), true).await.unwrap();
    let (first_after_kill, probe_order) = first_accepted(&engine, P).await;

    let report = load.await.unwrap();
    assert_every_accepted_answer_kept(&pool, &report, &probe_order).await;

    // The repair. The promoted replica lacks the master's last deductions (REDIS_HIGH). If
    // the breaker took the sale to the DB path, the guided exit brings it back and sets what
    // the DB says; otherwise the fenced rewrite does.
    let tripped = state.home_mode() == Mode::Degraded;
    if tripped {
        wait_for("the engine reports Redis healthy in its heartbeat", Duration::from_secs(20), async || {
            let ack = switch::acks::acknowledgement(&pool, 0, DEFAULT_STALE_AFTER).await.unwrap();
            ack.live == 1 && ack.instances.iter().all(|i| i.breaker_state != "OPEN")
        })
        .await;
        let exit = switch::guided_exit(&conns, &ExitOptions::new(Scope::Global, "Redis failed over"), &|_| {})
            .await
            .expect("the guided exit brings the sale back to Redis");
        assert!(exit.not_back_on_redis.is_empty(), "{exit:?}");
    }
    let _ = stop.send(());
    let _ = handle.await;
    sale::persist_all(&conns, P).await;
    // The console's own link to Redis reconnects to the moved address on its next command.
    let mut attempts = 0;
    let repaired = loop {
        match rewrite::rewrite(&conns, &RewriteRequest::new(P, "one-server failover")).await {
            Ok(done) => break done,
            Err(e) => {
                attempts += 1;
                assert!(attempts < 40, "the rewrite did not get through within 40 attempts: {e}");
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
    };
    let mut r = conns.redis.clone();
    let reading = read_products(&conns.mysql, &mut r, &conns.keys, &[P]).await.unwrap().remove(0);
    assert_eq!((reading.status, reading.drift), (DriftStatus::Ok, Some(0)), "{reading:?}");
    assert_eq!(support::scalar(&pool, "SELECT COUNT(*) FROM inventory WHERE stock < 0").await, 0);

    eprintln!(
        "one server, default settings: {}; breaker tripped to the DB path: {tripped}; rewrite after: {} (delta {:+})",
        felt(&report, first_after_kill),
        repaired.outcome.as_str(),
        repaired.delta,
    );
}
