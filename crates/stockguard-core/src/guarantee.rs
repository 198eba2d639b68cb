//! What an engine's ACCEPTED answer survives, as the engine reports it (`/health` and its
//! heartbeat row) and the console shows it: a leaf type, shared by the engine that decides it
//! and the console that reads it from `engine_heartbeats.accepted_guarantee`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What an ACCEPTED answer of one engine survives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Guarantee {
    /// `--replica-acks 0`: answered at once; a failover to a lagging replica may lose
    /// accepted orders. The weakest, so it sorts first.
    NoneOptedOut,
    /// No replica behind this Redis when the engine started: nothing to fail over to.
    NoReplicas,
    /// Vouched for, and the last new reservation was written to the DB before its answer
    /// (no replica acknowledged it in time).
    DbWriteThrough,
    /// Vouched for by a replica (`WAIT`): the last new reservation was acknowledged in time.
    Replica,
}

impl Guarantee {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoneOptedOut => "none_opted_out",
            Self::NoReplicas => "no_replicas",
            Self::DbWriteThrough => "db_write_through",
            Self::Replica => "replica",
        }
    }

    /// Whether a failover of the engine's Redis may lose an order its buyer was told was
    /// accepted: only when the operator opted out of vouching.
    pub fn may_lose_accepted(self) -> bool {
        self == Self::NoneOptedOut
    }
}

impl fmt::Display for Guarantee {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Guarantee {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        [Self::NoneOptedOut, Self::NoReplicas, Self::DbWriteThrough, Self::Replica]
            .into_iter()
            .find(|g| g.as_str() == s)
            .ok_or_else(|| format!("`{s}` is not a guarantee an engine reports"))
    }
}

/// The weakest guarantee among engines' reports (`None` when none reported one): what the
/// sale as a whole promises its buyers.
pub fn weakest(reports: impl IntoIterator<Item = Guarantee>) -> Option<Guarantee> {
    reports.into_iter().min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_guarantee_reads_back_from_its_own_word() {
        for g in [Guarantee::NoneOptedOut, Guarantee::NoReplicas, Guarantee::DbWriteThrough, Guarantee::Replica] {
            assert_eq!(g.as_str().parse::<Guarantee>(), Ok(g));
            assert_eq!(serde_json::to_value(g).unwrap(), g.as_str());
        }
        assert!("replicas".parse::<Guarantee>().is_err());
    }

    #[test]
    fn the_sales_guarantee_is_its_weakest_engines() {
        use Guarantee::*;
        assert_eq!(weakest([Replica, DbWriteThrough, Replica]), Some(DbWriteThrough));
        assert_eq!(weakest([Replica, NoneOptedOut, NoReplicas]), Some(NoneOptedOut));
        assert_eq!(weakest([]), None);
        assert!(NoneOptedOut.may_lose_accepted() && !DbWriteThrough.may_lose_accepted());
    }
}
