//! One master as the replica gate sees it: a connection of our own, under a generation
//! number, on which reservations are made, and the group rounds that vouch for them (group
//! commit): reads of the reservations back from the master's replicas when the gate reaches
//! them ([`super::readback`]), else one `WAIT` at a time.
//!
//! Reading back is the first choice: it is one round trip to a replica, blocks nothing on the
//! master, and the rounds need not wait for each other (BENCHMARKS.md, "What vouching costs",
//! run 12). The gate looks for the replicas in the background when it first vouches and again
//! whenever the master's link breaks or a replica fails to answer as a replica should; until
//! it has them it sends `WAIT`, as follows.
//!
//! `WAIT` vouches for the writes of the connection it is sent on, so a reservation and its
//! `WAIT` share a connection that never reconnects behind our back: a plain multiplexed
//! connection (not the manager), and a `WAIT` vouches only for reservations made on its own
//! generation. One `WAIT` vouches for every reservation whose answer came back before it was
//! sent, instead of one `WAIT` per order. But a `WAIT` blocks the connection it is sent on:
//! a reservation sent while one is in flight runs only once it ends, and is vouched for by a
//! later `WAIT`. With a stalled replica an order waited out several timeouts (about four at 50
//! outstanding: BENCHMARKS.md, "What vouching costs", run 3). So once a `WAIT` has run out its
//! timeout (the replica lags), the next one is sent on a connection new reservations no
//! longer use: they go to a fresh connection (a new generation, at most one a timeout), and
//! a reservation the `WAIT` still held is not vouched for (another generation's): it is
//! written through at once. And while the replicas lag, a master's group `WAIT`s are not sent
//! one after another (an order would wait for the one in flight, then its own: 2.7 timeouts at
//! 50 outstanding, run 4 there) but each as its group is ready, at most one every quarter
//! timeout, on a connection of its own: an order waits about its own `WAIT` and a quarter
//! timeout.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::AsyncConnectionConfig;
use tokio::sync::{mpsc, oneshot, watch, Mutex};
use tokio::time::Instant;

use super::readback::{Proof, Readers, ReadersError};

/// How long connecting to a master may take: a dead one is given up on quickly, and the gate
/// reads the topology again.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(500);

/// How often the gate may try again to reach a master's replicas for reading back, after it
/// could not or they failed: meanwhile it sends `WAIT`.
const RETRY_READERS_EVERY: Duration = Duration::from_secs(1);

/// How many times a group `WAIT` yields to let answered reservations join it before it goes.
const MAX_JOIN_YIELDS: usize = 4;

/// The connection reservations and their `WAIT` share, and which one it is.
#[derive(Clone)]
pub struct Link {
    pub generation: u64,
    pub conn: MultiplexedConnection,
}

/// A reservation waiting to be vouched for.
struct Waiter {
    generation: u64,
    proof: Proof,
    answer: oneshot::Sender<bool>,
}

struct Links {
    client: redis::Client,
    current: Mutex<Option<Link>>,
    generations: AtomicU64,
    /// The master's replicas, when the gate reaches enough of them to read reservations back
    /// ([`super::readback`]).
    readers: std::sync::Mutex<ReadersSlot>,
    /// Whether the next connection may reach another master than the last one (the first
    /// one, or one after a break): it then counts as a change of the gate's masters.
    suspect: AtomicBool,
    /// The gate's count of such changes ([`super::ReplicaGate::changes`]).
    changes: Arc<AtomicU64>,
}

#[derive(Default)]
struct ReadersSlot {
    readers: Option<Readers>,
    /// When the gate last tried to reach them.
    tried_at: Option<Instant>,
}

impl Links {
    /// Forgets the link of `generation` if it is still the current one: the next caller
    /// connects afresh, under a new generation. The master may be another one now: its
    /// replicas are looked for again.
    async fn broken(&self, generation: u64) {
        let mut current = self.current.lock().await;
        if current.as_ref().is_some_and(|l| l.generation == generation) {
            *current = None;
            self.suspect.store(true, Ordering::Relaxed);
            self.forget_readers();
        }
    }

    fn forget_readers(&self) {
        self.readers.lock().unwrap_or_else(|e| e.into_inner()).readers = None;
    }

    /// The replicas to read back from, if the gate reaches enough of them. When it has none,
    /// it looks for them in the background (at most once every [`RETRY_READERS_EVERY`]), and
    /// the caller sends `WAIT` meanwhile.
    fn readers(self: &Arc<Self>, needed: usize) -> Option<Readers> {
        let mut slot = self.readers.lock().unwrap_or_else(|e| e.into_inner());
        if slot.readers.is_some() {
            return slot.readers.clone();
        }
        if slot.tried_at.is_some_and(|t| t.elapsed() < RETRY_READERS_EVERY) {
            return None;
        }
        slot.tried_at = Some(Instant::now());
        let links = self.clone();
        tokio::spawn(async move {
            let found = async {
                let config = AsyncConnectionConfig::new().set_connection_timeout(CONNECT_TIMEOUT);
                let mut master = links
                    .client
                    .get_multiplexed_async_connection_with_config(&config)
                    .await
                    .map_err(ReadersError::Master)?;
                Readers::connect(&mut master, links.client.get_connection_info(), needed).await
            };
            // Tried again every second while it fails (an account without the right to run
            // INFO fails each time): quietly, the gate vouches all the same.
            match tokio::time::timeout(CONNECT_TIMEOUT * 4, found).await {
                Ok(Ok(readers)) => {
                    tracing::info!("replica gate: reading reservations back from the replicas");
                    links.readers.lock().unwrap_or_else(|e| e.into_inner()).readers = Some(readers);
                }
                Ok(Err(e)) => tracing::debug!(error = %e, "replica gate: replicas not read back; vouching by WAIT"),
                Err(_) => tracing::debug!("replica gate: replicas not reached in time; vouching by WAIT"),
            }
        });
        None
    }
}

/// One master: its link and the queue of its group rounds' task, which ends when this is
/// dropped.
pub struct Node {
    links: Arc<Links>,
    queue: mpsc::UnboundedSender<Waiter>,
    /// Whether the last round (a read back or a `WAIT`) ran out its timeout (the replicas
    /// lag), until one keeps up.
    lagging: Arc<watch::Sender<bool>>,
}

impl Node {
    /// The master `info` reaches, asking `replicas` replicas to acknowledge within `timeout`.
    /// It connects on first use, and counts each connection that may reach another master
    /// (the first, and any after a break) in `changes`.
    pub fn start(
        info: redis::ConnectionInfo,
        replicas: usize,
        timeout: Duration,
        changes: Arc<AtomicU64>,
    ) -> redis::RedisResult<Self> {
        let client = redis::Client::open(info)?;
        let links = Arc::new(Links {
            client,
            current: Mutex::new(None),
            generations: AtomicU64::new(0),
            readers: std::sync::Mutex::default(),
            suspect: AtomicBool::new(true),
            changes,
        });
        let (queue, waiting) = mpsc::unbounded_channel();
        let lagging = Arc::new(watch::Sender::new(false));
        tokio::spawn(vouch_in_groups(links.clone(), waiting, replicas, timeout, lagging.clone()));
        Ok(Self { links, queue, lagging })
    }

    /// Whether this master's replicas lag: its last round ran out its timeout and none has
    /// kept up since. An order made now will likely not be vouched for in time.
    pub fn lagging(&self) -> bool {
        *self.lagging.borrow()
    }

    /// Ends once this master's replicas lag (at once if they do now): a round ran out its
    /// timeout, so the one an order waits for will likely run out too.
    pub async fn lag_begins(&self) {
        let mut lag = self.lagging.subscribe();
        // The sender lives as long as `self`.
        let _ = lag.wait_for(|lagging| *lagging).await;
    }

    /// The current link, connecting a new one when there is none.
    pub async fn link(&self) -> redis::RedisResult<Link> {
        let mut current = self.links.current.lock().await;
        if let Some(link) = current.as_ref() {
            return Ok(link.clone());
        }
        let config = AsyncConnectionConfig::new().set_connection_timeout(CONNECT_TIMEOUT);
        let conn = self.links.client.get_multiplexed_async_connection_with_config(&config).await?;
        let generation = self.links.generations.fetch_add(1, Ordering::Relaxed) + 1;
        if self.links.suspect.swap(false, Ordering::Relaxed) {
            self.links.changes.fetch_add(1, Ordering::Relaxed);
        }
        let link = Link { generation, conn };
        *current = Some(link.clone());
        Ok(link)
    }

    /// A call on the link of `generation` failed: it is not used again.
    pub async fn broken(&self, generation: u64) {
        self.links.broken(generation).await;
    }

    /// Whether enough replicas have the reservation `proof` shows, made on the link of
    /// `generation`. False when they did not say so within the timeout, or the link broke
    /// meanwhile.
    pub async fn vouch(&self, generation: u64, proof: Proof) -> bool {
        let (answer, told) = oneshot::channel();
        if self.queue.send(Waiter { generation, proof, answer }).is_err() {
            return false;
        }
        told.await.unwrap_or(false)
    }
}

/// Vouches in one round for everyone queued since the last one (a read back, or one `WAIT`),
/// and tells each of them. Reads never wait for each other; while the replicas lag, neither
/// do the `WAIT`s: each goes on a connection of its own. Either way, while they lag, at most
/// one round goes every quarter timeout.
async fn vouch_in_groups(
    links: Arc<Links>,
    mut waiting: mpsc::UnboundedReceiver<Waiter>,
    replicas: usize,
    timeout: Duration,
    lagging: Arc<watch::Sender<bool>>,
) {
    let pace = timeout / 4;
    while let Some(first) = waiting.recv().await {
        // The others answered with this one queue behind it meanwhile: let them join, for as
        // long as each yield brings more (four at most). Each group `WAIT` costs the master, its
        // replicas and the kernel a round of their own, so fewer, larger groups cost less CPU
        // an order: BENCHMARKS.md, "What vouching costs", run 10 (one yield: 1.20x the
        // CPU an order of vouching off; this: 1.12x).
        let mut group = vec![first];
        for _ in 0..MAX_JOIN_YIELDS {
            tokio::task::yield_now().await;
            let before = group.len();
            while let Ok(more) = waiting.try_recv() {
                group.push(more);
            }
            if group.len() == before {
                break;
            }
        }
        let lag = *lagging.borrow();
        if let Some(readers) = links.readers(replicas) {
            // A read blocks nothing: the next group need not wait for this one.
            tokio::spawn(read_back(links.clone(), readers, group, replicas, timeout, lagging.clone()));
            if lag {
                tokio::time::sleep(pace).await;
            }
            continue;
        }
        let link = {
            let mut current = links.current.lock().await;
            let link = current.clone();
            if lag {
                // This `WAIT` will likely run out its timeout, and it blocks its connection
                // that long: reservations from now on go to a fresh one (a new generation,
                // vouched for by a later `WAIT`), not behind it.
                *current = None;
            }
            link
        };
        let round = one_wait(links.clone(), link, group, replicas, timeout, lagging.clone());
        if lag {
            // Nothing else is sent on its connection: the next group need not wait for it.
            tokio::spawn(round);
            tokio::time::sleep(pace).await;
        } else {
            round.await;
        }
    }
}

/// One group read back from the replicas: tells each of `group` whether enough replicas had
/// it in time, and `lagging` whether they all did.
async fn read_back(
    links: Arc<Links>,
    readers: Readers,
    group: Vec<Waiter>,
    replicas: usize,
    timeout: Duration,
    lagging: Arc<watch::Sender<bool>>,
) {
    let proofs: Vec<&Proof> = group.iter().map(|w| &w.proof).collect();
    let (vouched, failed) = readers.read_back(&proofs, replicas, Instant::now() + timeout).await;
    if failed {
        links.forget_readers();
    }
    let kept_up = vouched.iter().all(|v| *v);
    tell_lag(&lagging, kept_up);
    for (w, ok) in group.into_iter().zip(vouched) {
        let _ = w.answer.send(ok);
    }
}

/// Tells `lagging` whether the last round found the replicas lagging (a watcher wakes only
/// when that changes).
fn tell_lag(lagging: &watch::Sender<bool>, kept_up: bool) {
    lagging.send_if_modified(|lagging| std::mem::replace(lagging, !kept_up) == kept_up);
}

/// One group `WAIT` on `link`: tells each of `group` whether it vouched for them, and
/// `lagging` whether the replicas kept up.
async fn one_wait(
    links: Arc<Links>,
    link: Option<Link>,
    group: Vec<Waiter>,
    replicas: usize,
    timeout: Duration,
    lagging: Arc<watch::Sender<bool>>,
) {
    // WAIT answers by its own timeout; this bound is for a master that does not answer at all.
    let patience = timeout + Duration::from_millis(500);
    let millis = timeout.as_millis().max(1) as u64;
    let vouched = match link {
        Some(link) => {
            let mut conn = link.conn.clone();
            let mut wait = redis::cmd("WAIT");
            wait.arg(replicas).arg(millis);
            match tokio::time::timeout(patience, wait.query_async::<i64>(&mut conn)).await {
                Ok(Ok(acked)) => {
                    let kept_up = acked >= replicas as i64;
                    tell_lag(&lagging, kept_up);
                    Some((link.generation, kept_up))
                }
                _ => {
                    links.broken(link.generation).await;
                    None
                }
            }
        }
        None => None,
    };
    for w in group {
        let ok = matches!(vouched, Some((generation, true)) if generation == w.generation);
        let _ = w.answer.send(ok);
    }
}
