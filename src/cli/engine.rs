//! `stockguard engine serve`.

use std::time::Duration;

use clap::Subcommand;

use super::{connect, CliError};
use stockguard_core::switch::Home;
use stockguard_engine::engine::replicas::guarantee::ReplicaAcks;
use stockguard_engine::engine::state::{EngineConfig, EngineState};

#[derive(Debug, Subcommand)]
pub enum EngineCommand {
    /// Serve the order API and persist reservations, until Ctrl-C.
    Serve(ServeArgs),
    /// Persist reservations only (the queue consumers, no order API), until Ctrl-C or SIGTERM.
    Consume {
        /// The consumer's name: started again under the same name, it takes back its own
        /// pending messages first.
        #[arg(long)]
        instance_id: String,
        /// Seconds an order may stay unpaid (its payment deadline is set when persisted).
        #[arg(long, default_value_t = 900)]
        payment_timeout: u64,
        #[arg(long, default_value_t = 200)]
        batch_size: usize,
        /// Persist only the products of this drill run's rig (a drill's own consumers).
        #[arg(long, value_name = "RUN_ID")]
        rig: Option<u64>,
    },
}

/// `engine serve`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: String,
    /// Connections the kernel may hold for this instance before it accepts them; past it,
    /// a buyer's SYN is dropped and they wait a second to retry. Capped by
    /// `net.core.somaxconn`.
    #[arg(long, default_value_t = stockguard_engine::engine::http::listen::DEFAULT_BACKLOG,
          value_parser = clap::value_parser!(u32).range(1..=65_535))]
    listen_backlog: u32,
    /// This instance's id (default: random).
    #[arg(long)]
    instance_id: Option<String>,
    /// Seconds an order may stay unpaid.
    #[arg(long, default_value_t = 900)]
    payment_timeout: u64,
    /// Messages persisted per transaction at most.
    #[arg(long, default_value_t = 200)]
    batch_size: usize,
    /// Requests per second this instance admits (0: no limit).
    #[arg(long, default_value_t = 0)]
    global_rate: u32,
    /// Requests per second one user may make across instances (0: no limit).
    #[arg(long, default_value_t = 5)]
    per_user_rate: u32,
    /// Removed: one instance pinned to the DB path beside others selling from Redis is a
    /// split brain, and the DB path now sells only while the shared switch says DEGRADED.
    /// Kept (hidden) to refuse with a pointer to `stockguard degrade on`.
    #[arg(long, hide = true)]
    degraded: bool,
    /// Leave persisting to `stockguard engine consume` processes (as production runs its
    /// queue consumers apart from the order API).
    #[arg(long)]
    no_consumers: bool,
    /// Answer "accepted" only once this many replicas have the reservation (Redis `WAIT`),
    /// or, when they do not say so in time, once the order is written to the DB. Keeps
    /// accepted orders through a failover to a lagging replica. `auto`: one when the engine
    /// finds replicas behind its Redis (one server's or a cluster's). 0: answer at once, an
    /// opt-out the engine logs.
    #[arg(long, default_value_t = ReplicaAcks::Auto)]
    replica_acks: ReplicaAcks,
    /// How long to wait for the replicas before writing the order to the DB instead.
    #[arg(long, default_value_t = 50)]
    replica_ack_timeout_ms: u64,
    /// How long Redis failures must go on, in a row, before the breaker takes this instance
    /// to the DB path. Default: at once on one Redis server; 20 s on Redis Cluster, which
    /// fails a master over by itself in that time.
    #[arg(long)]
    breaker_grace_ms: Option<u64>,
    /// Sell only the products of this drill run's rig (`inventory.rig`), and send a tripped
    /// breaker to the rig's switch row instead of the whole sale's: how a drill's engines
    /// run beside a live sale without touching it. Without it, an engine sells the sale's
    /// own products and never a rig's.
    #[arg(long, value_name = "RUN_ID")]
    rig: Option<u64>,
}

pub async fn run(cmd: EngineCommand, profile: Option<&str>) -> Result<(), CliError> {
    let serve = match cmd {
        EngineCommand::Serve(args) => args,
        EngineCommand::Consume { instance_id, payment_timeout, batch_size, rig } => {
            return consume(profile, instance_id, payment_timeout, batch_size, home(rig)).await;
        }
    };
    let ServeArgs {
        listen,
        listen_backlog,
        instance_id,
        payment_timeout,
        batch_size,
        global_rate,
        per_user_rate,
        degraded,
        no_consumers,
        replica_acks,
        replica_ack_timeout_ms,
        breaker_grace_ms,
        rig,
    } = serve;
    if degraded {
        return Err(CliError::Refused(
            "--degraded was removed: an instance pinned to the DB path beside Redis-path instances oversells Redis. \
             Send the sale (or one product) to the DB for every instance with `stockguard degrade on --reason ...`"
                .into(),
        ));
    }
    if batch_size == 0 {
        return Err(CliError::Refused("--batch-size must be at least 1".into()));
    }
    let conns = connect(profile).await?;
    let mut config = EngineConfig {
        payment_timeout: Duration::from_secs(payment_timeout),
        batch_size,
        global_rate,
        per_user_rate,
        consumers: !no_consumers,
        home: home(rig),
        replica_acks,
        replica_ack_timeout: Duration::from_millis(replica_ack_timeout_ms.max(1)),
        ..EngineConfig::default()
    };
    config.breaker.grace = match breaker_grace_ms {
        Some(ms) => Duration::from_millis(ms),
        None if conns.redis.is_cluster() => stockguard_engine::engine::breaker::CLUSTER_FAILOVER_GRACE,
        None => Duration::ZERO,
    };
    if let Some(id) = instance_id {
        config.instance_id = id;
    }
    let listener = stockguard_engine::engine::http::listen::bind(&listen, listen_backlog)
        .await
        .map_err(|e| CliError::Refused(format!("cannot listen on {listen}: {e}")))?;
    eprintln!(
        "engine {} listening on {}",
        config.instance_id,
        listener.local_addr().map(|a| a.to_string()).unwrap_or(listen)
    );
    let state = EngineState::new(conns.mysql, conns.redis, conns.keys, config);
    stockguard_engine::engine::run::serve(listener, state, shutdown_signal())
        .await
        .map_err(|e| CliError::Refused(format!("server error: {e}")))
}

async fn consume(
    profile: Option<&str>,
    instance_id: String,
    payment_timeout: u64,
    batch_size: usize,
    home: Home,
) -> Result<(), CliError> {
    if batch_size == 0 {
        return Err(CliError::Refused("--batch-size must be at least 1".into()));
    }
    let conns = connect(profile).await?;
    let config = EngineConfig {
        instance_id,
        payment_timeout: Duration::from_secs(payment_timeout),
        batch_size,
        home,
        ..EngineConfig::default()
    };
    eprintln!("consumer {} persisting reservations", config.instance_id);
    let state = EngineState::new(conns.mysql, conns.redis, conns.keys, config);
    stockguard_engine::engine::run::consume(state, shutdown_signal()).await;
    Ok(())
}

fn home(rig: Option<u64>) -> Home {
    rig.map_or(Home::Sale, Home::Rig)
}

/// Ctrl-C, or SIGTERM (how a supervisor, or a drill runner, stops a process).
pub(super) async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("a SIGTERM handler installs");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}
