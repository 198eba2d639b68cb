//! The fault proxy as a service (`stockguard drill proxy serve`) in front of the real Redis:
//! a published Toxiproxy client drives it, each toxic does to the wire what Toxiproxy's does,
//! bad requests are refused with Toxiproxy's error shape, and a fault whose lease is not
//! renewed ends by itself: a fault held by a runner lasts while it renews it, and ends within a
//! lease once the runner is gone.

use std::time::{Duration, Instant};

use crate::support;
use serde_json::json;
use stockguard_engine::drill::client::{HeldFault, ProxyApi};
use stockguard_engine::drill::service::{self, NewProxy, Proxies};
use stockguard_engine::drill::toxics::{Kind, Stream, Toxic};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The service on a free port, with faults lapsing `lease` after they were last set.
async fn serve(lease: Option<Duration>) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let api = listener.local_addr().unwrap().to_string();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(service::serve(listener, Proxies::new(lease), async {
        let _ = stopped.await;
    }));
    (api, stop)
}

async fn call(
    method: reqwest::Method,
    api: &str,
    path: &str,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    let mut request = reqwest::Client::new().request(method, format!("http://{api}{path}"));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap_or(serde_json::Value::Null))
}

/// A proxy named `name` in front of the test run's Redis, on a free port: its address.
async fn redis_proxy(api: &str, name: &str) -> String {
    let listen = format!("127.0.0.1:{}", support::free_port());
    let body = json!({ "name": name, "listen": listen, "upstream": support::redis_addr().to_string() });
    let (status, shown) = call(reqwest::Method::POST, api, "/proxies", Some(body)).await;
    assert_eq!(status, 201, "{shown}");
    listen
}

/// One PING on `conn`, timed: `None` when no answer came within `within`.
async fn ping(conn: &mut TcpStream, within: Duration) -> Option<Duration> {
    let started = Instant::now();
    conn.write_all(b"PING\r\n").await.ok()?;
    let mut answer = [0u8; 7];
    match tokio::time::timeout(within, conn.read_exact(&mut answer)).await {
        Ok(Ok(_)) => {
            assert_eq!(&answer, b"+PONG\r\n");
            Some(started.elapsed())
        }
        _ => None,
    }
}

#[tokio::test]
async fn a_published_toxiproxy_client_adds_latency_that_is_measured_on_the_wire() {
    let (api, _stop) = serve(None).await;
    let listen = format!("127.0.0.1:{}", support::free_port());
    let upstream = support::redis_addr().to_string();

    // The client (toxiproxy_rust, from crates.io) is blocking: it runs off the runtime.
    let client_api = api.clone();
    let client_listen = listen.clone();
    tokio::task::spawn_blocking(move || {
        let client = toxiproxy_rust::client::Client::new(client_api.as_str());
        assert!(client.is_running());
        let proxies = client
            .populate(vec![toxiproxy_rust::proxy::ProxyPack::new("redis".into(), client_listen, upstream)])
            .expect("populate");
        assert_eq!(proxies.len(), 1);
    })
    .await
    .unwrap();

    let mut conn = TcpStream::connect(&listen).await.expect("the proxy listens where populate said");
    let before = ping(&mut conn, Duration::from_secs(2)).await.expect("Redis answers through the proxy");

    let client_api = api.clone();
    tokio::task::spawn_blocking(move || {
        let client = toxiproxy_rust::client::Client::new(client_api.as_str());
        client.find_proxy("redis").expect("the proxy is found").with_latency("downstream".into(), 300, 0, 1.0);
    })
    .await
    .unwrap();
    let (_, toxics) = call(reqwest::Method::GET, &api, "/proxies/redis/toxics", None).await;
    assert_eq!(
        toxics,
        json!([{ "name": "latency_downstream", "type": "latency", "stream": "downstream", "toxicity": 1.0, "attributes": { "latency": 300, "jitter": 0 } }])
    );

    let slowed = ping(&mut conn, Duration::from_secs(2)).await.expect("still answered, late");
    assert!(slowed >= Duration::from_millis(300), "the answer waited 300 ms on the wire: {slowed:?}");
    assert!(before < Duration::from_millis(100), "and did not before: {before:?}");

    let (status, _) = call(reqwest::Method::POST, &api, "/reset", None).await;
    assert_eq!(status, 204);
    let after = ping(&mut conn, Duration::from_secs(2)).await.unwrap();
    assert!(after < Duration::from_millis(100), "reset removes the latency: {after:?}");
}

#[tokio::test]
async fn a_timeout_toxic_silences_then_closes_and_reset_peer_resets() {
    let (api, _stop) = serve(None).await;
    let listen = redis_proxy(&api, "redis").await;
    let mut conn = TcpStream::connect(&listen).await.unwrap();
    assert!(ping(&mut conn, Duration::from_secs(1)).await.is_some());

    let toxic = json!({ "name": "hole", "type": "timeout", "stream": "upstream", "attributes": { "timeout": 400 } });
    let (status, shown) = call(reqwest::Method::POST, &api, "/proxies/redis/toxics", Some(toxic)).await;
    assert_eq!(status, 200, "{shown}");
    let started = Instant::now();
    assert_eq!(ping(&mut conn, Duration::from_millis(200)).await, None, "nothing gets through");
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(2), conn.read_to_end(&mut rest)).await;
    assert!(matches!(closed, Ok(Ok(0))), "then the connection is closed: {closed:?}");
    assert!(started.elapsed() >= Duration::from_millis(350), "after the timeout: {:?}", started.elapsed());

    call(reqwest::Method::DELETE, &api, "/proxies/redis/toxics/hole", None).await;
    let reset = json!({ "type": "reset_peer", "attributes": { "timeout": 0 } });
    let (status, shown) = call(reqwest::Method::POST, &api, "/proxies/redis/toxics", Some(reset)).await;
    assert_eq!((status, shown["name"].as_str()), (200, Some("reset_peer_downstream")));
    let mut conn = TcpStream::connect(&listen).await.unwrap();
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(Duration::from_secs(2), conn.read(&mut buf)).await.expect("the peer acts at once");
    assert_eq!(read.map_err(|e| e.kind()).unwrap_err(), std::io::ErrorKind::ConnectionReset);
}

#[tokio::test]
async fn faults_not_renewed_end_when_their_lease_runs_out() {
    let (api, _stop) = serve(Some(Duration::from_secs(1))).await;
    let listen = redis_proxy(&api, "redis").await;

    let (status, shown) = call(reqwest::Method::POST, &api, "/proxies/redis", Some(json!({ "enabled": false }))).await;
    assert_eq!((status, shown["enabled"].as_bool()), (200, Some(false)));
    let refused = TcpStream::connect(&listen).await.unwrap_err();
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused, "a disabled proxy refuses");
    let latency = json!({ "type": "latency", "attributes": { "latency": 1000 } });
    call(reqwest::Method::POST, &api, "/proxies/redis/toxics", Some(latency)).await;

    // Renewed once, half a lease later: the toxic outlives its first lease.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let renew = json!({ "attributes": { "latency": 1000 } });
    let (status, _) = call(reqwest::Method::POST, &api, "/proxies/redis/toxics/latency_downstream", Some(renew)).await;
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_millis(600)).await;
    let (_, proxy) = call(reqwest::Method::GET, &api, "/proxies/redis", None).await;
    assert_eq!(proxy["enabled"], json!(true), "the disable was not renewed: enabled again");
    assert_eq!(proxy["toxics"].as_array().map(Vec::len), Some(1), "the renewed toxic is still there");

    support::waits::wait_for("the renewed toxic's lease runs out too", Duration::from_secs(3), async || {
        call(reqwest::Method::GET, &api, "/proxies/redis/toxics", None).await.1 == json!([])
    })
    .await;
    let mut conn = TcpStream::connect(&listen).await.expect("accepting again");
    let answered = ping(&mut conn, Duration::from_secs(1)).await.expect("answered");
    assert!(answered < Duration::from_millis(100), "without the latency: {answered:?}");
}

#[tokio::test]
async fn bad_requests_are_refused_with_the_reason_and_change_nothing() {
    let (api, _stop) = serve(None).await;
    redis_proxy(&api, "redis").await;

    let again = json!({ "name": "redis", "listen": "127.0.0.1:0", "upstream": "127.0.0.1:1" });
    let (status, error) = call(reqwest::Method::POST, &api, "/proxies", Some(again)).await;
    assert_eq!((status, error["status"].as_u64()), (409, Some(409)), "{error}");
    assert!(error["error"].as_str().unwrap().contains("already exists"));

    let (status, error) = call(reqwest::Method::GET, &api, "/proxies/nope", None).await;
    assert_eq!((status, error["error"].as_str()), (404, Some("proxy not found")));

    let unknown = json!({ "type": "slicer", "attributes": {} });
    let (status, _) = call(reqwest::Method::POST, &api, "/proxies/redis/toxics", Some(unknown)).await;
    assert!((400..500).contains(&status), "an unknown toxic type is refused: {status}");
    let too_toxic = json!({ "type": "latency", "toxicity": 2.0, "attributes": { "latency": 5 } });
    let (status, error) = call(reqwest::Method::POST, &api, "/proxies/redis/toxics", Some(too_toxic)).await;
    assert_eq!(status, 400, "{error}");
    assert!(error["error"].as_str().unwrap().contains("toxicity"));

    let (_, proxies) = call(reqwest::Method::GET, &api, "/proxies", None).await;
    assert_eq!(proxies.as_object().map(|p| p.len()), Some(1));
    assert_eq!(proxies["redis"]["toxics"], json!([]), "nothing half-made is left behind");
}

#[tokio::test]
async fn a_body_without_a_content_type_is_read_as_toxiproxy_reads_it_and_bad_json_says_why() {
    let (api, _stop) = serve(None).await;
    redis_proxy(&api, "redis").await;
    // As `curl -d` and Toxiproxy's own examples send it: no `Content-Type: application/json`.
    let raw = |body: &'static str| {
        reqwest::Client::new().post(format!("http://{api}/proxies/redis/toxics")).body(body).send()
    };
    let added = raw(r#"{"name": "slow", "type": "latency", "attributes": {"latency": 5}}"#).await.unwrap();
    assert_eq!(added.status().as_u16(), 200);
    let (_, toxics) = call(reqwest::Method::GET, &api, "/proxies/redis/toxics", None).await;
    assert_eq!(toxics[0]["name"], "slow", "{toxics}");

    let broken = raw(r#"{"type": "latency""#).await.unwrap();
    assert_eq!(broken.status().as_u16(), 400);
    let error: serde_json::Value = broken.json().await.unwrap();
    assert!(error["error"].as_str().unwrap().contains("not the JSON"), "{error}");
}

#[tokio::test]
async fn a_held_fault_lasts_while_renewed_and_ends_within_its_lease_once_its_holder_is_gone() {
    let lease = Duration::from_secs(1);
    let (api, _stop) = serve(Some(lease)).await;
    let client = std::sync::Arc::new(ProxyApi::new(&api));
    let listen = format!("127.0.0.1:{}", support::free_port());
    let redis = NewProxy {
        name: "redis".into(),
        listen: listen.clone(),
        upstream: support::redis_addr().to_string(),
        enabled: true,
    };
    client.populate(&[redis]).await.unwrap();
    let silence =
        Toxic { name: "silence".into(), kind: Kind::Timeout { timeout: 0 }, stream: Stream::Upstream, toxicity: 1.0 };

    // Held, and renewed every third of the lease: it outlives two leases.
    let held = client.hold("redis", HeldFault::Toxic(silence.clone()), lease / 3).await.unwrap();
    tokio::time::sleep(lease * 5 / 2).await;
    assert_eq!(client.proxy("redis").await.unwrap().toxics, vec![silence.clone()], "still held");
    let mut conn = TcpStream::connect(&listen).await.unwrap();
    assert_eq!(ping(&mut conn, Duration::from_millis(300)).await, None, "and still silencing Redis");

    // The holder is gone without restoring it (a runner killed): the lease ends the fault.
    let gone = Instant::now();
    drop(held);
    support::waits::wait_for("the fault ends with its lease", lease * 2, async || {
        client.proxy("redis").await.unwrap().toxics.is_empty()
    })
    .await;
    assert!(gone.elapsed() <= lease + Duration::from_millis(400), "within a lease: {:?}", gone.elapsed());
    let mut conn = TcpStream::connect(&listen).await.unwrap();
    assert!(ping(&mut conn, Duration::from_secs(1)).await.is_some(), "Redis answers again");

    // A holder that is done restores at once, without waiting for the lease.
    let held = client.hold("redis", HeldFault::Disabled, lease / 3).await.unwrap();
    assert!(TcpStream::connect(&listen).await.is_err(), "disabled: refused");
    held.restore().await.unwrap();
    assert!(client.proxy("redis").await.unwrap().enabled, "restored at once");
    TcpStream::connect(&listen).await.expect("accepting again");
}
