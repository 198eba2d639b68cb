//! Which master serves which slot, and how many replicas follow it, read from a cluster's own
//! node table (`CLUSTER NODES`): what the replica gate needs to make a reservation on the
//! product's master over a connection of its own, and what tells an engine whether its
//! cluster has replicas at all.

/// A master of the cluster, as its node table lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Master {
    pub id: String,
    pub host: String,
    pub port: u16,
    /// Inclusive slot ranges.
    pub slots: Vec<(u16, u16)>,
    /// Replicas following it whose link is up.
    pub replicas: usize,
}

/// The cluster's masters that are not marked failed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Topology {
    pub masters: Vec<Master>,
}

impl Topology {
    /// Reads `CLUSTER NODES` text. A node marked `fail` is left out (its slots have no master
    /// until a replica takes them over); `fail?` (one node's suspicion) is not.
    pub fn parse(table: &str) -> Self {
        let rows: Vec<Vec<&str>> =
            table.lines().map(|l| l.split(' ').collect::<Vec<_>>()).filter(|r| r.len() >= 8).collect();
        let failed = |row: &[&str]| row[2].split(',').any(|f| f == "fail" || f == "noaddr");
        let masters = rows
            .iter()
            .filter(|r| r[2].split(',').any(|f| f == "master") && !failed(r))
            .filter_map(|r| {
                // `ip:port@cport[,hostname]`
                let address = r[1].split(['@', ',']).next()?;
                let (host, port) = address.rsplit_once(':')?;
                let slots = r[8..]
                    .iter()
                    .filter(|s| !s.starts_with('['))
                    .filter_map(|s| {
                        let (from, to) = s.split_once('-').unwrap_or((s, s));
                        Some((from.parse().ok()?, to.parse().ok()?))
                    })
                    .collect();
                let replicas = rows.iter().filter(|o| o[3] == r[0] && !failed(o) && o[7] == "connected").count();
                Some(Master { id: r[0].to_string(), host: host.to_string(), port: port.parse().ok()?, slots, replicas })
            })
            .collect();
        Self { masters }
    }

    /// The master serving `slot`, if any does.
    pub fn owner(&self, slot: u16) -> Option<&Master> {
        self.masters.iter().find(|m| m.slots.iter().any(|&(from, to)| from <= slot && slot <= to))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "\
a1 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460
a2 127.0.0.1:7001@17001 master - 0 0 2 connected 5461-10922
a3 127.0.0.1:7002@17002 master,fail - 0 0 3 disconnected 10923-16383
b1 127.0.0.1:7003@17003 slave a1 0 0 1 connected
b2 127.0.0.1:7004@17004 slave,fail a2 0 0 2 disconnected
b3 127.0.0.1:7005@17005 slave a3 0 0 3 connected
";

    #[test]
    fn a_slot_is_served_by_its_live_master_with_its_live_replicas() {
        let t = Topology::parse(TABLE);
        let a1 = t.owner(0).unwrap();
        assert_eq!((a1.host.as_str(), a1.port, a1.replicas), ("127.0.0.1", 7000, 1));
        assert_eq!(t.owner(10922).unwrap().replicas, 0, "its replica is marked failed");
        assert_eq!(t.owner(16383), None, "a failed master serves nothing until its replica takes over");
    }
}
