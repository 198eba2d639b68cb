//! What "accepted" promises on this engine's Redis, and how it is chosen: by default the
//! engine looks for replicas behind its Redis (one server's `INFO replication`, a cluster's
//! `CLUSTER NODES`) and, when there are any, vouches for every new reservation before it
//! answers; `--replica-acks 0` is the operator's explicit, logged opt-out.

use std::fmt;
use std::num::NonZeroUsize;
use std::str::FromStr;

use stockguard_core::redis_link::RedisLink;

use super::topology::Topology;

/// How many replicas must have a new reservation before its buyer is told "accepted"
/// (`engine serve --replica-acks auto|0|N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReplicaAcks {
    /// One, when the engine finds replicas behind its Redis; none when there are none.
    #[default]
    Auto,
    /// None: answered at once. An accepted order may be lost to a failover.
    Off,
    /// Exactly this many, whatever the engine finds.
    Exactly(NonZeroUsize),
}

impl FromStr for ReplicaAcks {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s.eq_ignore_ascii_case("auto") {
            return Ok(Self::Auto);
        }
        let n: usize = s.parse().map_err(|_| format!("`{s}` is neither `auto` nor a number of replicas"))?;
        Ok(NonZeroUsize::new(n).map_or(Self::Off, Self::Exactly))
    }
}

impl fmt::Display for ReplicaAcks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::Off => f.write_str("0"),
            Self::Exactly(n) => write!(f, "{n}"),
        }
    }
}

/// What an ACCEPTED answer of this engine survives: the core's leaf type, which the
/// engine's heartbeat carries to the console.
pub use stockguard_core::guarantee::Guarantee;

/// Why the engine could not tell whether its Redis has replicas.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    #[error("reading the replicas behind Redis ({step}): {source}")]
    Redis {
        step: &'static str,
        #[source]
        source: redis::RedisError,
    },
}

/// The most replicas any master behind `redis` has: `connected_slaves` of one server, the
/// live replicas of each master in a cluster's node table.
pub async fn replicas_behind(redis: &RedisLink) -> Result<usize, DiscoveryError> {
    let mut conn = redis.clone();
    if redis.is_cluster() {
        let table: String = redis::cmd("CLUSTER")
            .arg("NODES")
            .query_async(&mut conn)
            .await
            .map_err(|source| DiscoveryError::Redis { step: "CLUSTER NODES", source })?;
        return Ok(Topology::parse(&table).masters.iter().map(|m| m.replicas).max().unwrap_or(0));
    }
    match redis::cmd("INFO").arg("replication").query_async::<String>(&mut conn).await {
        Ok(info) => Ok(connected_replicas(&info)),
        // The sale's Redis users may not run INFO (`@dangerous`); `WAIT` they may.
        Err(e) if e.code() == Some("NOPERM") => replicas_following(redis).await,
        Err(source) => Err(DiscoveryError::Redis { step: "INFO replication", source }),
    }
}

/// The replicas following the server, as `WAIT 0 0` on a connection that has written
/// nothing counts them: every replica online has acknowledged offset 0.
async fn replicas_following(redis: &RedisLink) -> Result<usize, DiscoveryError> {
    let step = "WAIT 0 0 on a fresh connection";
    let info = redis.seeds().into_iter().next().ok_or_else(|| DiscoveryError::Redis {
        step,
        source: redis::RedisError::from((redis::ErrorKind::InvalidClientConfig, "no server to ask")),
    })?;
    let fresh = async {
        let mut conn = redis::Client::open(info)?.get_multiplexed_async_connection().await?;
        redis::cmd("WAIT").arg(0).arg(0).query_async::<usize>(&mut conn).await
    };
    fresh.await.map_err(|source| DiscoveryError::Redis { step, source })
}

/// `connected_slaves:N` of `INFO replication`.
fn connected_replicas(info: &str) -> usize {
    info.lines().find_map(|l| l.trim().strip_prefix("connected_slaves:")).and_then(|n| n.parse().ok()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_reads_auto_a_count_or_zero_as_off() {
        assert_eq!("auto".parse(), Ok(ReplicaAcks::Auto));
        assert_eq!("0".parse(), Ok(ReplicaAcks::Off));
        assert_eq!("2".parse(), Ok(ReplicaAcks::Exactly(NonZeroUsize::new(2).unwrap())));
        assert!("some".parse::<ReplicaAcks>().is_err());
        assert_eq!(ReplicaAcks::default(), ReplicaAcks::Auto, "safe by default");
    }

    #[test]
    fn info_replication_says_how_many_replicas_follow() {
        assert_eq!(connected_replicas("# Replication\r\nrole:master\r\nconnected_slaves:1\r\n"), 1);
        assert_eq!(connected_replicas("role:master\r\nconnected_slaves:0\r\n"), 0);
    }
}
