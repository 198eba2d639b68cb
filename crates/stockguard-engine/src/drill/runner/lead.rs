//! Leading the rig back to Redis once the faults are over, as on-call would, while the sale
//! goes on: the guided exit, run beside the sampler's ticks, and tried again while an engine
//! stays on the DB path (an engine whose heartbeats were late may reach the DB path only
//! after the faults ended).

use std::time::{Duration, Instant};

use stockguard_core::connect::Connections;
use stockguard_core::drills::events::TickFigures;
use tokio::task::JoinHandle;

use super::verdict::{lead_back, LedBack};

/// The engines must look settled this long after the faults before the sale counts as back.
const SETTLE: Duration = Duration::from_secs(3);
/// Between two attempts of the guided exit.
const RETRY_AFTER: Duration = Duration::from_secs(3);
const ATTEMPTS: u32 = 5;

pub struct Leader {
    /// The drill run whose rig it leads back (`Scope::Rig`).
    run_id: u64,
    task: Option<JoinHandle<Option<LedBack>>>,
    attempts: u32,
    last_attempt: Option<Instant>,
    faults_over_at: Option<Instant>,
    /// Every engine is back on Redis (or the drill does not lead back).
    pub done: bool,
}

impl Leader {
    pub fn new(run_id: u64, enabled: bool) -> Self {
        Self { run_id, task: None, attempts: 0, last_attempt: None, faults_over_at: None, done: !enabled }
    }

    /// After each tick: answers what a finished attempt did; starts another when an engine is
    /// still on the DB path; says done once every engine is back on Redis and settled.
    pub async fn step(
        &mut self,
        faults_over: bool,
        figures: &TickFigures,
        engines: u32,
        conns: &Connections,
        instances: &[String],
    ) -> Option<LedBack> {
        if self.done || !faults_over {
            return None;
        }
        let over_at = *self.faults_over_at.get_or_insert_with(Instant::now);
        let mut led = None;
        if let Some(task) = self.task.take_if(|t| t.is_finished()) {
            led = task.await.ok().flatten();
        }
        if self.task.is_some() {
            return led;
        }
        let back = figures.db_path == 0 && figures.redis_path >= engines;
        if back && over_at.elapsed() >= SETTLE {
            self.done = true;
        } else if !back && self.attempts < ATTEMPTS && self.last_attempt.is_none_or(|t| t.elapsed() >= RETRY_AFTER) {
            self.attempts += 1;
            self.last_attempt = Some(Instant::now());
            self.task = Some(tokio::spawn(lead_back(conns.clone(), self.run_id, instances.to_vec())));
        } else if !back && self.attempts >= ATTEMPTS {
            // Given up: the verdict shows the sale did not come back (no recovery time).
            self.done = true;
        }
        led
    }

    /// Waits for an attempt still running (a half-done exit would leave sales paused).
    pub async fn finish(&mut self) -> Option<LedBack> {
        match self.task.take() {
            Some(task) => task.await.ok().flatten(),
            None => None,
        }
    }
}
