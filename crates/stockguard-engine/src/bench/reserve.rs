//! The reserve script: our client against the `redis-benchmark` ceiling.

use std::sync::Arc;
use std::time::Instant;

use secrecy::ExposeSecret as _;

use super::{BenchError, BenchProduct, BenchReport, Figure};
use crate::engine::order_no::InstanceTag;
use crate::engine::reserve::{ReserveRequest, Reserver};
use stockguard_core::connect::Connections;

/// `redis-benchmark` of EVALSHA of the reserve script: requests per second.
///
/// Every call gets random order numbers, buyers and idempotency fields (`__rand_int__`), so
/// it does the full work of a reservation (deduct, in-flight entry, buyer count, XADD), as
/// our client does.
pub async fn ceiling(
    conns: &Connections,
    product: u64,
    requests: u64,
    clients: u32,
    pipeline: u32,
) -> Result<f64, BenchError> {
    // On a cluster, one seed: `--cluster` has redis-benchmark read the slots from it and send
    // each call to the master of its key's hash tag.
    let redis_url = conns.settings.redis_url.expose_secret();
    let cluster = stockguard_core::redis_link::is_cluster_url(redis_url);
    let seed = stockguard_core::redis_link::seeds(redis_url).first().copied().unwrap_or(redis_url);
    let url = url::Url::parse(seed).map_err(|e| BenchError::RedisBenchmark(e.to_string()))?;
    // Checked on the installed redis-benchmark 7.0: it authenticates only with `-a` (and
    // `-u`), both on its command line; REDISCLI_AUTH, which redis-cli reads, it ignores.
    if url.password().is_some() {
        return Err(BenchError::PasswordOnCommandLine);
    }
    let host = url.host_str().unwrap_or("127.0.0.1").to_string();
    let port = url.port().unwrap_or(6379).to_string();
    let keys = &conns.keys;
    // Make sure the server knows the script, so EVALSHA finds it.
    let mut r = conns.redis.clone();
    let _: String = redis::cmd("SCRIPT").arg("LOAD").arg(Reserver::source()).query_async(&mut r).await?;
    let mut cmd = tokio::process::Command::new("redis-benchmark");
    cmd.args([
        "-h",
        &host,
        "-p",
        &port,
        "-c",
        &clients.to_string(),
        "-n",
        &requests.to_string(),
        "-P",
        &pipeline.to_string(),
    ])
    .args(["-r", "1000000000", "--csv"]);
    if cluster {
        cmd.arg("--cluster");
    }
    cmd.args(["EVALSHA", &Reserver::sha(), "7"])
        .args([
            keys.stock(product),
            keys.inflight(product),
            keys.buyers(product),
            keys.orders_stream(product),
            keys.idempotency(product),
            keys.seq(product),
            keys.epoch(product),
        ])
        .args([
            "o__rand_int__",
            "__rand_int__",
            "1",
            "1000000000",
            "__rand_int__:i",
            &format!("o__rand_int__ __rand_int__ {product} 1 1700000000000 i"),
        ]);
    let out = cmd.output().await.map_err(|e| BenchError::RedisBenchmark(e.to_string()))?;
    if !out.status.success() {
        return Err(BenchError::RedisBenchmark(String::from_utf8_lossy(&out.stderr).into_owned()));
    }
    parse_csv_rps(&String::from_utf8_lossy(&out.stdout))
        .ok_or_else(|| BenchError::RedisBenchmark("no figure in its output".into()))
}

async fn ceiling_pipelined(conns: &Connections, product: u64, requests: u64) -> Result<f64, BenchError> {
    ceiling(conns, product, requests, 50, 16).await
}

/// The requests-per-second field of `redis-benchmark --csv` (second column of the data row).
pub fn parse_csv_rps(csv: &str) -> Option<f64> {
    csv.lines()
        .filter(|l| !l.starts_with("\"test\""))
        .find_map(|l| l.split(',').nth(1).map(|f| f.trim_matches('"').to_string()))
        .and_then(|f| f.parse().ok())
}

/// `requests` reservations straight through our Rust client, `clients` at a time over one
/// multiplexed connection (as the engine does), each a different buyer; how long it took.
/// `tag` keeps the idempotency keys of separate calls apart.
pub async fn reserve_many(
    conns: &Connections,
    product: u64,
    requests: u64,
    clients: u32,
    tag: &str,
) -> Result<std::time::Duration, BenchError> {
    reserve_spread(conns, &[product], requests, clients, tag).await
}

/// Like [`reserve_many`], with the requests spread round-robin over `products`.
pub async fn reserve_spread(
    conns: &Connections,
    products: &[u64],
    requests: u64,
    clients: u32,
    tag: &str,
) -> Result<std::time::Duration, BenchError> {
    // A registered instance tag, as an engine has: the numbers never clash with an engine's.
    let instance = InstanceTag::claim(&conns.mysql, &format!("bench-{tag}")).await?;
    let reserver = Arc::new(Reserver::new(instance));
    let next = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let products: Arc<[u64]> = products.into();
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..clients {
        let (reserver, next, keys, mut redis, tag, products) = (
            reserver.clone(),
            next.clone(),
            conns.keys.clone(),
            conns.redis.clone(),
            tag.to_string(),
            products.clone(),
        );
        workers.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= requests {
                    return Ok::<(), redis::RedisError>(());
                }
                let req = ReserveRequest {
                    user_id: 2_000_000_000 + i,
                    product_id: products[i as usize % products.len()],
                    qty: 1,
                    idempotency_key: format!("{tag}{i}"),
                    per_user_limit: 1_000_000_000,
                };
                reserver.reserve(&mut redis, &keys, &req).await?;
            }
        }));
    }
    for w in workers {
        w.await.expect("bench worker")?;
    }
    Ok(started.elapsed())
}

/// Our Rust client's rate: requests per second.
pub async fn ours(conns: &Connections, product: u64, requests: u64, clients: u32) -> Result<f64, BenchError> {
    let took = reserve_many(conns, product, requests, clients, "b").await?;
    Ok(requests as f64 / took.as_secs_f64())
}

/// The `reserve` benchmark.
pub async fn run(conns: &Connections, quick: bool) -> Result<BenchReport, BenchError> {
    let requests = if quick { 5_000 } else { 200_000 };
    // Refused before anything is written (the ceiling would refuse it after).
    let seeds = stockguard_core::redis_link::seeds(conns.settings.redis_url.expose_secret());
    if seeds.iter().any(|seed| url::Url::parse(seed).is_ok_and(|u| u.password().is_some())) {
        return Err(BenchError::PasswordOnCommandLine);
    }
    let product = BenchProduct::create(conns, 1_000_000_000, 1_000_000_000).await?;
    let result = async {
        let ceiling = ceiling(conns, product.id, requests, 50, 1).await?;
        let pipelined = ceiling_pipelined(conns, product.id, requests).await?;
        let ours = ours(conns, product.id, requests, 50).await?;
        Ok::<_, BenchError>((ceiling, pipelined, ours))
    }
    .await;
    product.drop_all(conns).await?;
    let (ceiling, pipelined, ours) = result?;
    Ok(BenchReport {
        bench: "reserve".into(),
        figures: vec![
            Figure::new("redis-benchmark EVALSHA reserve script, -c 50 -P 1", ceiling, "req/s"),
            Figure::new("redis-benchmark EVALSHA reserve script, -c 50 -P 16 (pipelined)", pipelined, "req/s"),
            Figure::new("our Rust client, 50 concurrent, one multiplexed connection", ours, "req/s"),
        ],
        ratios: vec![
            Figure::new("ours / ceiling (-P 1)", ours / ceiling, ""),
            Figure::new("ours / pipelined ceiling (-P 16)", ours / pipelined, ""),
        ],
        notes: vec![
            format!("{requests} reservations each, same server, same script, one after the other"),
            "our client multiplexes: concurrent calls share one connection and are pipelined, so -P 1 is not its ceiling; -P 16 is the closer one".into(),
        ],
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_rps_is_read_from_redis_benchmark_csv() {
        let csv = "\"test\",\"rps\",\"avg_latency_ms\"\n\"EVALSHA abc 5 ...\",\"67567.57\",\"0.7\"\n";
        assert_eq!(super::parse_csv_rps(csv), Some(67567.57));
    }
}
