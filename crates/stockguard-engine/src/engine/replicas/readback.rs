//! Vouching by reading the replicas back: a reservation is on a replica once the replica's
//! copy of the product's idempotency hash names the order's number.
//!
//! `WAIT` asks the master to ask its replicas how far they got and to answer once they say:
//! a round through the master, the replica and the master again, and it blocks the connection
//! it is sent on meanwhile. Reading the reservation back from the replica is one round trip
//! to the replica, which received it when the buyer's answer left the master: BENCHMARKS.md,
//! "What vouching costs", run 12.
//!
//! Why a read proves what a `WAIT` proves:
//! - the script's writes reach a replica together (a script's effects replicate as one
//!   `MULTI`/`EXEC`), so a replica holding the order's idempotency entry holds its deduction
//!   and its stream message too;
//! - the entry's value is the order number, unique by construction (`engine/order_no.rs`), so
//!   no other history (a replica resynced from a restarted master, another sale's writes)
//!   can show it by chance;
//! - each round also asks the node its `ROLE`, and counts it only while it is a replica whose
//!   link to its master is up: a replica promoted meanwhile is a master, and holding the entry
//!   there proves nothing.
//!
//! The gate reads back when it can reach enough replicas: those the master's `INFO
//! replication` lists, with the master's own credentials. Where it cannot (no right to run
//! `INFO`, replicas behind addresses the engine does not reach), it sends `WAIT` as before
//! ([`super::node`]).

use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt as _};
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, ConnectionInfo};
use tokio::time::Instant;

/// How long connecting to a replica may take.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(500);

/// How many reads of a round follow each other at once before the round waits a millisecond
/// between them: a replica a little behind is read again at once, one far behind is not
/// polled hard.
const EAGER_READS: usize = 4;

/// What shows a replica has a reservation: `HGET key field` answers `order_no`.
#[derive(Debug, Clone)]
pub struct Proof {
    pub key: String,
    pub field: String,
    pub order_no: String,
}

/// Connections to a master's replicas, for reading reservations back.
#[derive(Clone)]
pub struct Readers {
    replicas: Vec<MultiplexedConnection>,
}

/// Why a master's replicas cannot be read back (the gate then sends `WAIT`).
#[derive(Debug, thiserror::Error)]
pub enum ReadersError {
    #[error("connecting to the master to ask for its replicas failed: {0}")]
    Master(#[source] redis::RedisError),
    #[error("asking the master which replicas follow it failed: {0}")]
    Info(#[source] redis::RedisError),
    #[error("{reached} replica(s) reached, {needed} needed")]
    TooFew { reached: usize, needed: usize },
}

impl Readers {
    /// Connects to the replicas `master` lists as online, reached with `info`'s credentials;
    /// needs `needed` of them.
    pub async fn connect(
        master: &mut MultiplexedConnection,
        info: &ConnectionInfo,
        needed: usize,
    ) -> Result<Self, ReadersError> {
        let listed: String =
            redis::cmd("INFO").arg("replication").query_async(master).await.map_err(ReadersError::Info)?;
        let mut replicas = Vec::new();
        for (host, port) in online_replicas(&listed) {
            match connect_one(super::reach(info, &host, port)).await {
                Ok(conn) => replicas.push(conn),
                Err(e) => tracing::debug!(%host, port, error = %e, "replica gate: a replica cannot be read back"),
            }
        }
        if replicas.len() < needed {
            return Err(ReadersError::TooFew { reached: replicas.len(), needed });
        }
        Ok(Self { replicas })
    }

    /// Reads `proofs` back from the replicas until each is on `needed` of them or `deadline`
    /// passes. Returns, for each proof, whether enough replicas had it, and whether a replica
    /// failed (its connection is then not to be used again).
    pub async fn read_back(&self, proofs: &[&Proof], needed: usize, deadline: Instant) -> (Vec<bool>, bool) {
        // seen[r][i]: replica r holds proof i.
        let mut seen = vec![vec![false; proofs.len()]; self.replicas.len()];
        let mut failed = false;
        let mut reads = 0;
        loop {
            let mut rounds: FuturesUnordered<_> = self
                .replicas
                .iter()
                .zip(seen.iter())
                .enumerate()
                .map(|(r, (conn, seen))| {
                    let wanted: Vec<usize> = (0..proofs.len()).filter(|&i| !seen[i]).collect();
                    let mut conn = conn.clone();
                    async move {
                        if wanted.is_empty() {
                            return (r, Read::Held(Vec::new()));
                        }
                        let mut pipe = redis::pipe();
                        pipe.cmd("ROLE");
                        for &i in &wanted {
                            pipe.cmd("HGET").arg(&proofs[i].key).arg(&proofs[i].field);
                        }
                        let read = tokio::time::timeout_at(deadline, pipe.query_async::<Vec<redis::Value>>(&mut conn));
                        let answer = match read.await {
                            Ok(Ok(values)) => held(&values, &wanted, proofs),
                            Ok(Err(e)) => Read::Failed(e.to_string()),
                            Err(_) => Read::TimedOut,
                        };
                        (r, answer)
                    }
                })
                .collect();
            let vouched = |seen: &[Vec<bool>]| -> Vec<bool> {
                (0..proofs.len()).map(|i| seen.iter().filter(|s| s[i]).count() >= needed).collect()
            };
            // Answers are taken as they come: enough replicas holding every proof is enough,
            // and a stalled one among several does not hold the round up.
            while let Some((r, answer)) = rounds.next().await {
                match answer {
                    Read::Held(held) => held.into_iter().for_each(|i| seen[r][i] = true),
                    Read::Failed(why) => {
                        tracing::debug!(%why, "replica gate: reading a replica back failed");
                        failed = true;
                    }
                    Read::TimedOut => {}
                }
                if vouched(&seen).iter().all(|v| *v) {
                    return (vouched(&seen), failed);
                }
            }
            let vouched = vouched(&seen);
            if vouched.iter().all(|v| *v) || failed || Instant::now() >= deadline {
                return (vouched, failed);
            }
            reads += 1;
            if reads < EAGER_READS {
                tokio::task::yield_now().await;
            } else {
                tokio::time::sleep_until((Instant::now() + Duration::from_millis(1)).min(deadline)).await;
            }
        }
    }
}

/// What one read of one replica found.
#[derive(Debug, PartialEq)]
enum Read {
    /// Which of the proofs asked for it holds.
    Held(Vec<usize>),
    /// It cannot vouch: the read failed, or it is no longer a replica following its master.
    Failed(String),
    /// No answer before the deadline (a stalled replica).
    TimedOut,
}

/// Which of `wanted` the answer to `ROLE` and their `HGET`s shows held; a failure unless the
/// node is a replica with its link up.
fn held(values: &[redis::Value], wanted: &[usize], proofs: &[&Proof]) -> Read {
    let Some((role, entries)) = values.split_first() else { return Read::Failed("an empty answer".into()) };
    if !is_following_replica(role) {
        return Read::Failed(format!("not a replica following its master: {role:?}"));
    }
    let held = wanted
        .iter()
        .zip(entries)
        .filter(|(&i, value)| {
            redis::from_redis_value::<Option<String>>(value).ok().flatten().as_deref() == Some(&proofs[i].order_no)
        })
        .map(|(&i, _)| i)
        .collect();
    Read::Held(held)
}

/// `ROLE` of a replica whose link to its master is up: `["slave", host, port, "connected", offset]`.
fn is_following_replica(role: &redis::Value) -> bool {
    let Ok(fields) = redis::from_redis_value::<Vec<redis::Value>>(role) else { return false };
    let text = |i: usize| fields.get(i).and_then(|v| redis::from_redis_value::<String>(v).ok());
    text(0).as_deref() == Some("slave") && text(3).as_deref() == Some("connected")
}

/// The replicas `INFO replication` lists as online: `slaveN:ip=..,port=..,state=online,...`.
fn online_replicas(info: &str) -> Vec<(String, u16)> {
    info.lines()
        .filter_map(|line| {
            let (name, fields) = line.trim().split_once(':')?;
            name.strip_prefix("slave")?.parse::<usize>().ok()?;
            let field = |key: &str| fields.split(',').find_map(|f| f.strip_prefix(key)?.strip_prefix('='));
            (field("state")? == "online").then_some(())?;
            Some((field("ip")?.to_string(), field("port")?.parse().ok()?))
        })
        .collect()
}

async fn connect_one(info: ConnectionInfo) -> redis::RedisResult<MultiplexedConnection> {
    let client = redis::Client::open(info)?;
    let config = AsyncConnectionConfig::new().set_connection_timeout(CONNECT_TIMEOUT);
    let mut conn = client.get_multiplexed_async_connection_with_config(&config).await?;
    // A cluster replica answers reads only after READONLY; one server refuses the command
    // (no cluster support), and needs none.
    let _ = redis::cmd("READONLY").query_async::<()>(&mut conn).await;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_replication_lists_the_online_replicas_only() {
        let info = "# Replication\r\nrole:master\r\nconnected_slaves:2\r\n\
                    slave0:ip=127.0.0.1,port=7402,state=online,offset=1,lag=0\r\n\
                    slave1:ip=10.0.0.2,port=6380,state=wait_bgsave,offset=0,lag=0\r\n\
                    master_failover_state:no-failover\r\n";
        assert_eq!(online_replicas(info), vec![("127.0.0.1".to_string(), 7402)]);
    }

    #[test]
    fn a_node_counts_only_while_it_is_a_replica_with_its_link_up() {
        use redis::Value::{BulkString, Int};
        let role = |kind: &str, state: &str| {
            redis::Value::Array(vec![
                BulkString(kind.into()),
                BulkString(b"127.0.0.1".to_vec()),
                Int(7401),
                BulkString(state.into()),
                Int(10),
            ])
        };
        assert!(is_following_replica(&role("slave", "connected")));
        assert!(!is_following_replica(&role("slave", "connect")));
        assert!(!is_following_replica(&role("master", "connected")));
    }

    #[test]
    fn an_entry_proves_a_reservation_only_when_it_names_the_order() {
        use redis::Value::{Array, BulkString, Int, Nil};
        let proof = |no: &str| Proof { key: "k".into(), field: "f".into(), order_no: no.into() };
        let (a, b, c) = (proof("A1"), proof("B2"), proof("C3"));
        let role = Array(vec![
            BulkString(b"slave".to_vec()),
            BulkString(b"h".to_vec()),
            Int(1),
            BulkString(b"connected".to_vec()),
            Int(1),
        ]);
        let values = vec![role, BulkString(b"A1".to_vec()), BulkString(b"someone else".to_vec()), Nil];
        assert_eq!(held(&values, &[0, 1, 2], &[&a, &b, &c]), Read::Held(vec![0]));
    }
}
