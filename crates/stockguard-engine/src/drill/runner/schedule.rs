//! The request schedule: every request the load will send, when, to which engine, and what
//! the buyer does after an accepted order, drawn from the drill file's seed alone. Two runs of
//! one file send the same schedule (same [`Schedule::hash`]); only the buyers' ids (fresh per
//! run, so a re-run is not refused by the first run's limits) and the products' ids differ.

use std::time::Duration;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

use stockguard_core::drills::plan::Load;

/// What the buyer does once the order is accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    Wait,
    Pay,
    Cancel,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// When to send it, from the load's start.
    pub at: Duration,
    /// The buyer, counted from the run's first buyer.
    pub buyer: u64,
    /// The product, by its position in the rig.
    pub product: usize,
    /// The engine (0-based) the request goes to: a load balancer's choice, seeded.
    pub engine: u32,
    pub then: Then,
}

#[derive(Debug, Clone)]
pub struct Schedule {
    pub requests: Vec<Request>,
    pub hash: String,
}

impl Schedule {
    /// Every buyer asks once for every product, in a seeded order, paced at `load.rate`,
    /// cut at `load.duration_s`.
    pub fn build(load: &Load, products: usize, engines: u32) -> Self {
        // ChaCha8 is portable and its stream is fixed by its seed across platforms and
        // versions, which a schedule recorded for a re-run needs.
        let mut rng = ChaCha8Rng::seed_from_u64(load.seed);
        let mut pairs: Vec<(u64, usize)> = (0..load.buyers).flat_map(|b| (0..products).map(move |p| (b, p))).collect();
        pairs.shuffle(&mut rng);
        let cap = u64::from(load.rate).saturating_mul(load.duration_s) as usize;
        pairs.truncate(cap);
        let interval = 1.0 / f64::from(load.rate);
        let requests: Vec<Request> = pairs
            .into_iter()
            .enumerate()
            .map(|(i, (buyer, product))| {
                let engine = rng.random_range(0..engines.max(1));
                let draw: f64 = rng.random();
                let then = if draw < load.pay {
                    Then::Pay
                } else if draw < load.pay + load.cancel {
                    Then::Cancel
                } else {
                    Then::Wait
                };
                Request { at: Duration::from_secs_f64(i as f64 * interval), buyer, product, engine, then }
            })
            .collect();
        let mut digest = Sha256::new();
        for r in &requests {
            let then = match r.then {
                Then::Wait => 0u8,
                Then::Pay => 1,
                Then::Cancel => 2,
            };
            digest.update(r.at.as_micros().to_le_bytes());
            digest.update(r.buyer.to_le_bytes());
            digest.update((r.product as u64).to_le_bytes());
            digest.update(r.engine.to_le_bytes());
            digest.update([then]);
        }
        let hash = digest.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect();
        Self { requests, hash }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(seed: u64) -> Load {
        Load { buyers: 500, rate: 100, duration_s: 3, seed, concurrency: 8, pay: 0.3, cancel: 0.1 }
    }

    #[test]
    fn one_seed_gives_one_schedule_and_another_seed_another() {
        let a = Schedule::build(&load(7), 2, 3);
        let b = Schedule::build(&load(7), 2, 3);
        assert_eq!(a.requests, b.requests);
        assert_eq!(a.hash, b.hash);
        assert_ne!(Schedule::build(&load(8), 2, 3).hash, a.hash);
    }

    #[test]
    fn the_schedule_is_paced_at_the_rate_and_cut_at_the_duration() {
        let s = Schedule::build(&load(1), 2, 3);
        assert_eq!(s.requests.len(), 300);
        assert_eq!(s.requests[100].at, Duration::from_secs(1));
        assert!(s.requests.iter().all(|r| r.engine < 3 && r.product < 2 && r.buyer < 500));
    }

    #[test]
    fn no_buyer_asks_twice_for_one_product() {
        let s = Schedule::build(&Load { duration_s: 100, ..load(3) }, 2, 3);
        let mut seen = std::collections::HashSet::new();
        assert_eq!(s.requests.len(), 1000);
        assert!(s.requests.iter().all(|r| seen.insert((r.buyer, r.product))));
    }
}
