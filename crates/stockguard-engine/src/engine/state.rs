//! What every request handler of one engine instance shares.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use sqlx::MySqlPool;
use tokio::sync::{Notify, RwLock};

use super::breaker::{classify, Breaker, BreakerConfig, RedisFault};
use super::limits::Limits;
use super::order_no::InstanceTag;
use super::replicas::guarantee::ReplicaAcks;
use super::replicas::{ReplicaGate, Vouching};
use super::reserve::Reserver;
use super::write_through::WriteThrough;
use stockguard_core::keys::Keys;
use stockguard_core::switch::{Home, Mode, SwitchView};

#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub instance_id: String,
    /// Unpaid orders close this long after they were reserved.
    pub payment_timeout: Duration,
    pub batch_size: usize,
    pub claim_min_idle: Duration,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// How often the timeout closer and the release relay run.
    pub close_interval: Duration,
    /// Requests per second this instance admits (0: no limit).
    pub global_rate: u32,
    /// Requests per second one user may make, across instances (0: no limit).
    pub per_user_rate: u32,
    /// How often the switch is read.
    pub switch_poll: Duration,
    /// A switch read or heartbeat write slower than this is abandoned; the last known mode
    /// stays in force.
    pub switch_timeout: Duration,
    /// How often a heartbeat is written when nothing changed.
    pub heartbeat_every: Duration,
    /// A Redis call on the order path slower than this counts as a timeout.
    pub redis_timeout: Duration,
    pub breaker: BreakerConfig,
    /// Whether this instance persists reservations itself. Off when the queue consumers run
    /// as processes of their own (`stockguard engine consume`), as MQ consumers do in
    /// production, so a drill can stop them while the order API goes on selling.
    pub consumers: bool,
    /// The products this instance sells, persists, closes and relays: the sale's, or one
    /// drill rig's (`engine serve --rig`); and so the switch row its breaker escalates to.
    pub home: Home,
    /// How many replicas must have a new reservation before "accepted"; by default one when
    /// the engine finds replicas behind its Redis ([`super::replicas`]).
    pub replica_acks: ReplicaAcks,
    /// How long they may take before the order is written to the DB instead.
    pub replica_ack_timeout: Duration,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            instance_id: format!("engine-{:04x}", rand::random::<u16>()),
            payment_timeout: Duration::from_secs(15 * 60),
            batch_size: 200,
            claim_min_idle: Duration::from_secs(30),
            max_body_bytes: 4096,
            close_interval: Duration::from_millis(500),
            global_rate: 0,
            per_user_rate: 0,
            switch_poll: Duration::from_millis(100),
            switch_timeout: Duration::from_millis(400),
            heartbeat_every: Duration::from_millis(500),
            redis_timeout: Duration::from_millis(300),
            breaker: BreakerConfig::default(),
            consumers: true,
            home: Home::Sale,
            replica_acks: ReplicaAcks::Auto,
            replica_ack_timeout: super::replicas::DEFAULT_ACK_TIMEOUT,
        }
    }
}

/// A Redis call of the order path that failed.
#[derive(Debug, thiserror::Error)]
pub enum RedisCallError {
    #[error("Redis did not answer within {0:?}")]
    TimedOut(Duration),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
}

/// A product as the order path needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProductRule {
    pub per_user_limit: i64,
}

/// One engine instance's shared state. Cloned for every request (axum's `State`), so it is
/// one `Arc`: a clone is one atomic increment, not one per field.
#[derive(Clone)]
pub struct EngineState(Arc<Shared>);

impl std::ops::Deref for EngineState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

pub struct Shared {
    pub pool: MySqlPool,
    pub redis: stockguard_core::redis_link::RedisLink,
    /// Whether the order path reserves through a replica gate: decided on first use
    /// ([`EngineState::vouching`]) unless given.
    vouching: tokio::sync::OnceCell<Vouching>,
    /// Where orders no replica vouched for in time are written to the DB, in batches.
    pub write_through: WriteThrough,
    /// Whether each product's Redis history has issued every reservation the DB holds: if
    /// not, its orders are written to the DB before they are answered.
    pub histories: super::history::Histories,
    pub keys: Keys,
    /// Made with the instance tag the DB hands out on first use ([`EngineState::reserver`]);
    /// `run::serve` takes it before serving, so an engine that cannot register never sells.
    reserver: tokio::sync::OnceCell<Reserver>,
    pub config: EngineConfig,
    pub limits: Limits,
    pub breaker: Arc<Breaker>,
    /// Woken when the breaker trips, so the switch task escalates at once.
    pub tripped: Arc<Notify>,
    switch: ArcSwap<SwitchView>,
    /// Held (shared) by every order request from its mode check to its answer; the switch
    /// task takes it exclusively after a change, so "applied" means no request decided
    /// under the old mode is still running.
    pub admission: tokio::sync::RwLock<()>,
    products: RwLock<HashMap<u64, ProductRule>>,
}

impl EngineState {
    pub fn new(
        pool: MySqlPool,
        redis: stockguard_core::redis_link::RedisLink,
        keys: Keys,
        config: EngineConfig,
    ) -> Self {
        Self::with_replicas(pool, redis, keys, config, None)
    }

    /// An instance that answers "accepted" only once `gate`'s replicas (or the DB) have the
    /// reservation ([`super::replicas`]); without a gate, its configuration decides.
    pub fn with_replicas(
        pool: MySqlPool,
        redis: stockguard_core::redis_link::RedisLink,
        keys: Keys,
        config: EngineConfig,
        replicas: Option<ReplicaGate>,
    ) -> Self {
        let write_through = WriteThrough::new(pool.clone(), redis.clone(), keys.clone(), config.payment_timeout);
        Self(Arc::new(Shared {
            pool,
            redis,
            vouching: tokio::sync::OnceCell::new_with(replicas.map(Vouching::Gate)),
            write_through,
            histories: super::history::Histories::default(),
            keys,
            reserver: tokio::sync::OnceCell::new(),
            limits: Limits::new(config.global_rate, config.per_user_rate),
            breaker: Arc::new(Breaker::new(config.breaker.clone())),
            tripped: Arc::default(),
            switch: ArcSwap::default(),
            admission: tokio::sync::RwLock::default(),
            config,
            products: RwLock::default(),
        }))
    }

    /// The reserve script and this instance's order numbers. The first call registers the
    /// instance in `engine_instances` for its tag; later calls return the same reserver.
    pub async fn reserver(&self) -> Result<&Reserver, sqlx::Error> {
        self.reserver
            .get_or_try_init(|| async {
                let tag = InstanceTag::claim(&self.pool, &self.config.instance_id).await?;
                Ok(Reserver::new(tag))
            })
            .await
    }

    /// The replica acknowledgement gate, when this instance waits for replicas and has
    /// decided so ([`Self::vouching`]).
    pub fn replicas(&self) -> Option<&ReplicaGate> {
        self.vouching.get().and_then(Vouching::gate)
    }

    /// Whether this instance vouches for its reservations: decided on first call from its
    /// configuration and the replicas behind its Redis ([`Vouching::decide`]).
    pub async fn vouching(&self) -> &Vouching {
        self.vouching
            .get_or_init(|| Vouching::decide(&self.redis, self.config.replica_acks, self.config.replica_ack_timeout))
            .await
    }

    /// How this instance takes orders for `product_id` now: the switch (its home's row and the
    /// product's row), raised to DB mode by a tripped breaker. There is no per-instance pin:
    /// one instance selling through the DB beside others selling from Redis is a split brain
    /// (Redis accepts units the DB path already sold), and the DB path refuses to sell unless
    /// the switch in the DB says DEGRADED (`engine::degraded`). To send orders to the DB, flip
    /// the switch (`stockguard degrade on`: audited, role-checked, confirmed on production).
    pub fn mode_for(&self, product_id: u64) -> Mode {
        let home = self.config.home;
        let view = self.switch.load();
        self.raise(view.mode_in(home, product_id), view.home_revision(home))
    }

    /// The mode for products without a row of their own (what heartbeats report): its home's
    /// row, the global row for a sale's engine and its rig's row for a drill's.
    pub fn home_mode(&self) -> Mode {
        let home = self.config.home;
        let view = self.switch.load();
        self.raise(view.home_mode(home), view.home_revision(home))
    }

    fn raise(&self, mode: Mode, home_revision: u64) -> Mode {
        match self.breaker.tripped_under() {
            // The guided exit has rebuilt Redis (the home's row NORMAL, newer than the trip)
            // but this instance's breaker has not closed yet: selling through the DB now would
            // make the rebuilt stock wrong, so it waits instead.
            Some(tripped) if mode == Mode::Normal && home_revision > tripped => Mode::Paused,
            Some(_) => mode.max(Mode::Degraded),
            None => mode,
        }
    }

    /// The switch as last read.
    pub fn switch_view(&self) -> Arc<SwitchView> {
        self.switch.load_full()
    }

    /// Applies a newer reading of the switch. Returns true when it changed anything.
    pub fn apply_switch(&self, view: SwitchView) -> bool {
        if *self.switch.load().as_ref() == view {
            return false;
        }
        self.switch.store(Arc::new(view));
        true
    }

    /// Whether Redis may answer `product_id`'s orders on its own word: its history holds
    /// every reservation the DB has ([`super::history`]), read through the engine's Redis
    /// link; checked once unless found lost.
    pub async fn history_whole(&self, product_id: u64) -> bool {
        let mut redis = self.redis.clone();
        self.history_whole_on(&mut redis, product_id, 0).await
    }

    /// [`Self::history_whole`] read on `conn` (the replica gate's link the order reserves
    /// on), checked again after the gate's master links changed (`change`,
    /// [`super::replicas::ReplicaGate::changes`]). A check that does not answer within the
    /// Redis timeout says no, for a moment.
    pub async fn history_whole_on<C>(&self, conn: &mut C, product_id: u64, change: u64) -> bool
    where
        C: redis::aio::ConnectionLike + Send,
    {
        self.histories.whole(&self.pool, conn, &self.keys, product_id, change, self.config.redis_timeout).await
    }

    /// Runs one Redis call of the order path under the Redis timeout, telling the breaker
    /// how it went. Errors that say nothing about reachability are not counted.
    pub async fn redis_call<T>(
        &self,
        call: impl std::future::Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, RedisCallError> {
        let fault = match tokio::time::timeout(self.config.redis_timeout, call).await {
            Ok(Ok(v)) => {
                self.breaker.record_success();
                return Ok(v);
            }
            Ok(Err(e)) => match classify(&e) {
                Some(fault) => (fault, RedisCallError::Redis(e)),
                None => return Err(RedisCallError::Redis(e)),
            },
            Err(_) => (RedisFault::Timeout, RedisCallError::TimedOut(self.config.redis_timeout)),
        };
        if self.breaker.record_failure(fault.0, self.switch.load().home_revision(self.config.home)) {
            tracing::error!(instance = %self.config.instance_id, "Redis circuit breaker tripped: orders go to the DB");
            self.tripped.notify_one();
        }
        Err(fault.1)
    }

    /// The product ids known to this instance (those requested so far).
    pub async fn known_products(&self) -> Vec<u64> {
        self.products.read().await.keys().copied().collect()
    }

    /// The product's rule, from the cache or (on a miss) the DB. `None`: no such product in
    /// this instance's home (a drill rig's product is not the sale's, nor the other way).
    pub async fn product(&self, product_id: u64) -> Result<Option<ProductRule>, sqlx::Error> {
        if let Some(rule) = self.products.read().await.get(&product_id) {
            return Ok(Some(*rule));
        }
        let limit: Option<i32> =
            sqlx::query_scalar("SELECT per_user_limit FROM inventory WHERE product_id = ? AND rig <=> ?")
                .bind(product_id)
                .bind(self.config.home.rig())
                .fetch_optional(&self.pool)
                .await?;
        let rule = limit.map(|l| ProductRule { per_user_limit: i64::from(l) });
        if let Some(rule) = rule {
            self.products.write().await.insert(product_id, rule);
        }
        Ok(rule)
    }
}
