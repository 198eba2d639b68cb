//! The fault-injecting proxy in front of the real Redis: each fault does what it says.

use crate::support;

use std::time::{Duration, Instant};

use stockguard_engine::drill::{Fault, FaultProxy};

async fn ping(conn: &mut redis::aio::MultiplexedConnection) -> redis::RedisResult<String> {
    redis::cmd("PING").query_async(conn).await
}

async fn connect(proxy: &FaultProxy) -> redis::RedisResult<redis::aio::MultiplexedConnection> {
    let client = redis::Client::open(format!("redis://{}/", proxy.addr())).unwrap();
    let config = redis::AsyncConnectionConfig::new()
        .set_response_timeout(Duration::from_millis(500))
        .set_connection_timeout(Duration::from_millis(500));
    client.get_multiplexed_async_connection_with_config(&config).await
}

#[tokio::test]
async fn the_proxy_passes_through_delays_black_holes_refuses_and_cuts() {
    let proxy = FaultProxy::start(support::redis_addr()).await.unwrap();
    let mut conn = connect(&proxy).await.expect("Redis answers through the proxy");
    assert_eq!(ping(&mut conn).await.unwrap(), "PONG");

    proxy.set(Fault::Latency(Duration::from_millis(150)));
    let t = Instant::now();
    assert_eq!(ping(&mut conn).await.unwrap(), "PONG");
    assert!(t.elapsed() >= Duration::from_millis(300), "held back each way: {:?}", t.elapsed());

    proxy.set(Fault::Blackhole);
    let err = ping(&mut conn).await.unwrap_err();
    assert!(err.is_timeout(), "no answer ever comes: {err:?}");

    proxy.set(Fault::Refuse);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let refused = tokio::net::TcpStream::connect(proxy.addr()).await.unwrap_err();
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);

    proxy.set(Fault::PassThrough);
    let mut fresh = None;
    for _ in 0..40 {
        if let Ok(c) = connect(&proxy).await {
            fresh = Some(c);
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let mut fresh = fresh.expect("the port opens again");
    assert_eq!(ping(&mut fresh).await.unwrap(), "PONG");

    proxy.cut();
    let err = ping(&mut fresh).await.unwrap_err();
    assert!(err.is_connection_dropped() || err.is_io_error() || err.is_unrecoverable_error(), "{err:?}");
}
