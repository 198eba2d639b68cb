//! The rig a drill runs on: fresh products put on sale, a fault proxy in front of MySQL and
//! one in front of Redis for every engine, and the engine processes (and, when the file says
//! so, queue consumer processes) started by the runner with their connections routed through
//! those proxies. Process faults touch only these processes; the proxies' faults touch only
//! these links; the profile's servers themselves are never touched.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use secrecy::ExposeSecret;
use stockguard_core::connect::Connections;
use stockguard_core::drills::plan::{Plan, Target};
use tokio::process::{Child, Command};

use super::failover::PrivateRedis;
use super::process::{dies_with_runner, server_port};
use super::RunnerError;
use crate::drill::client::ProxyApi;
use crate::drill::service::{self, NewProxy, Proxies};

/// A process the runner started: an engine (with its order API) or a queue consumer.
pub struct Proc {
    /// 1-based, as drill files count engines.
    pub index: u32,
    pub instance_id: String,
    /// The order API's base URL (engines only).
    pub url: Option<String>,
    args: Vec<String>,
    env: Vec<(String, String)>,
    log: PathBuf,
    child: Option<Child>,
}

impl Proc {
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    fn spawn(&mut self, binary: &PathBuf) -> Result<(), RunnerError> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(|e| RunnerError::Rig(format!("cannot open {}: {e}", self.log.display())))?;
        let mut cmd = Command::new(binary);
        cmd.args(&self.args)
            .env_remove("STOCKGUARD_PROFILE")
            .env_remove("STOCKGUARD_MYSQL_REPLICA_URL")
            .envs(self.env.iter().cloned())
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone().map_err(|e| RunnerError::Rig(e.to_string()))?)
            .stderr(log)
            .kill_on_drop(true);
        dies_with_runner(&mut cmd);
        let child = cmd.spawn().map_err(|e| RunnerError::Rig(format!("cannot start {}: {e}", binary.display())))?;
        self.child = Some(child);
        Ok(())
    }

    /// SIGKILL, and reaped.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }

    /// SIGSTOP or SIGCONT.
    pub fn signal(&self, stop: bool) {
        #[cfg(unix)]
        if let Some(pid) = self.pid() {
            use nix::sys::signal::{kill, Signal};
            let sig = if stop { Signal::SIGSTOP } else { Signal::SIGCONT };
            let _ = kill(nix::unistd::Pid::from_raw(pid as i32), sig);
        }
        #[cfg(not(unix))]
        let _ = stop;
    }

    /// Continued if stopped, asked to stop (SIGTERM), killed if it has not within `grace`.
    async fn stop(&mut self, grace: Duration) {
        self.signal(false);
        let Some(mut child) = self.child.take() else { return };
        #[cfg(unix)]
        if let Some(pid) = child.id() {
            use nix::sys::signal::{kill, Signal};
            let _ = kill(nix::unistd::Pid::from_raw(pid as i32), Signal::SIGTERM);
        }
        if tokio::time::timeout(grace, child.wait()).await.is_err() {
            let _ = child.kill().await;
        }
    }
}

pub struct Rig {
    pub products: Vec<u64>,
    pub api: Arc<ProxyApi>,
    pub engines: Vec<Proc>,
    pub consumers: Vec<Proc>,
    /// Where the processes' logs are.
    pub dir: PathBuf,
    binary: PathBuf,
    /// The failover drill's own master and replica.
    pub private_redis: Option<PrivateRedis>,
    /// The runner's connections to the sale: the profile's, except that in the failover
    /// drill Redis is the drill's own, through a proxy that moves with the failover.
    pub runner_conns: Connections,
    /// The in-process proxy service, unless the runner drives an external one.
    service: Option<(tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<std::io::Result<()>>)>,
}

/// What the rig needs beyond the plan.
pub struct RigOptions {
    /// The `stockguard` binary the processes are started from.
    pub binary: PathBuf,
    /// An external proxy API (`host:port`: a `stockguard drill proxy serve` or a Toxiproxy)
    /// instead of the runner's own.
    pub proxy_api: Option<String>,
    /// The lease of the runner's own proxies' faults.
    pub lease: Duration,
}

/// The proxy names of engine `i`'s links.
pub fn redis_link(i: u32) -> String {
    format!("e{i}-redis")
}

/// The runner's own link to the failover drill's Redis.
const RUNNER_REDIS_LINK: &str = "runner-redis";

pub fn mysql_link(i: u32) -> String {
    format!("e{i}-mysql")
}

fn host_port(url: &url::Url) -> Result<String, RunnerError> {
    match (
        url.host_str(),
        url.port_or_known_default().or(match url.scheme() {
            "mysql" => Some(3306),
            _ => Some(6379),
        }),
    ) {
        (Some(host), Some(port)) => Ok(format!("{host}:{port}")),
        _ => Err(RunnerError::Rig(format!("{} has no host", url.scheme()))),
    }
}

fn through(url: &url::Url, port: u16) -> String {
    let mut routed = url.clone();
    let _ = routed.set_host(Some("127.0.0.1"));
    let _ = routed.set_port(Some(port));
    routed.to_string()
}

impl Rig {
    /// Puts the plan's products on sale (fresh ids above every existing one that no Redis key
    /// uses, on this run's rig:
    /// `inventory.rig`, which only the rig's own engines sell) and starts the
    /// proxies and the processes; returns once every engine answers `/health`.
    pub async fn build(conns: &Connections, plan: &Plan, run_id: u64, opts: RigOptions) -> Result<Self, RunnerError> {
        // Run ids are per database: two sales' runs may share one, their logs may not.
        let dir = std::env::temp_dir().join(format!("stockguard-drill-{run_id}-{:08x}", rand::random::<u32>()));
        std::fs::create_dir_all(&dir).map_err(|e| RunnerError::Rig(format!("cannot create {}: {e}", dir.display())))?;
        let private_redis = match plan.faults.iter().any(|f| f.target == Target::RedisMaster) {
            true => Some(PrivateRedis::start(&dir).await?),
            false => None,
        };

        let (api, service) = match &opts.proxy_api {
            Some(api) => (Arc::new(ProxyApi::new(api)), None),
            None => {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
                let addr = listener.local_addr()?;
                let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
                let proxies = Proxies::new(Some(opts.lease));
                let served = tokio::spawn(service::serve(listener, proxies, async {
                    let _ = stopped.await;
                }));
                (Arc::new(ProxyApi::new(&addr.to_string())), Some((stop, served)))
            }
        };
        let mysql = url::Url::parse(conns.settings.mysql_url.expose_secret())
            .map_err(|e| RunnerError::Rig(format!("the profile's MySQL URL: {e}")))?;
        let redis = url::Url::parse(conns.settings.redis_url.expose_secret())
            .map_err(|e| RunnerError::Rig(format!("the profile's Redis URL: {e}")))?;
        // The Redis the engines sell from: the profile's, or the failover drill's own master.
        let redis_upstream = match &private_redis {
            Some(private) => private.master_addr(),
            None => host_port(&redis)?,
        };
        // Every proxy listens on a port the proxy service picks (port 0): a port picked here
        // and bound there later can be taken meanwhile, by any connection's ephemeral port.
        let any_port = "127.0.0.1:0".to_string();
        let mut wanted = Vec::new();
        if private_redis.is_some() {
            // The runner's own way to that Redis, never faulted, moved with the failover.
            wanted.push(NewProxy {
                name: RUNNER_REDIS_LINK.into(),
                listen: any_port.clone(),
                upstream: redis_upstream.clone(),
                enabled: true,
            });
        }
        for i in 1..=plan.rig.engines {
            wanted.push(NewProxy {
                name: redis_link(i),
                listen: any_port.clone(),
                upstream: redis_upstream.clone(),
                enabled: true,
            });
            wanted.push(NewProxy {
                name: mysql_link(i),
                listen: any_port.clone(),
                upstream: host_port(&mysql)?,
                enabled: true,
            });
        }
        let views = api.populate(&wanted).await?;
        // Start from no fault at all: an external proxy may still hold an earlier run's.
        api.reset().await?;
        let port_of = |name: &str| -> Result<u16, RunnerError> {
            views
                .iter()
                .find(|v| v.name == name)
                .and_then(|v| v.listen.parse::<std::net::SocketAddr>().ok())
                .map(|a| a.port())
                .ok_or_else(|| RunnerError::Rig(format!("the proxy API did not say where {name} listens")))
        };
        let ports = (1..=plan.rig.engines)
            .map(|i| Ok((port_of(&redis_link(i))?, port_of(&mysql_link(i))?)))
            .collect::<Result<Vec<_>, RunnerError>>()?;

        let runner_conns = match private_redis {
            Some(_) => {
                let mut settings = conns.settings.clone();
                settings.redis_url = through(&redis, port_of(RUNNER_REDIS_LINK)?).into();
                Connections::open(settings)
                    .await
                    .map_err(|e| RunnerError::Rig(format!("the drill's own Redis: {e}")))?
            }
            None => conns.clone(),
        };
        let products = put_on_sale(&runner_conns, plan, run_id).await?;
        let settings = &conns.settings;
        let mut rig = Rig {
            products,
            api,
            engines: Vec::new(),
            consumers: Vec::new(),
            dir,
            binary: opts.binary,
            service,
            private_redis,
            runner_conns,
        };
        for (i, (redis_port, mysql_port)) in (1..=plan.rig.engines).zip(ports) {
            let env = vec![
                ("STOCKGUARD_MYSQL_URL".to_string(), through(&mysql, mysql_port)),
                ("STOCKGUARD_REDIS_URL".to_string(), through(&redis, redis_port)),
                ("STOCKGUARD_KEY_PREFIX".to_string(), settings.key_prefix.clone()),
                ("STOCKGUARD_ENVIRONMENT".to_string(), settings.environment.as_str().to_string()),
                ("STOCKGUARD_ACTOR".to_string(), format!("drill-{run_id}")),
                ("RUST_LOG".to_string(), "warn".to_string()),
            ];
            let port = server_port()?;
            let instance_id = format!("drill{run_id}-e{i}");
            let timeout = plan.rig.payment_timeout_s.to_string();
            let mut args = vec!["engine", "serve", "--listen"].into_iter().map(String::from).collect::<Vec<_>>();
            args.extend([format!("127.0.0.1:{port}"), "--instance-id".into(), instance_id.clone()]);
            args.extend(["--payment-timeout".into(), timeout.clone(), "--per-user-rate".into(), "0".into()]);
            // The rig's products only, and the rig's switch row: the sale beside it untouched.
            args.extend(["--rig".into(), run_id.to_string()]);
            if plan.rig.replica_acks > 0 {
                args.extend(["--replica-acks".into(), plan.rig.replica_acks.to_string()]);
            }
            if plan.rig.separate_consumers {
                args.push("--no-consumers".into());
                let consumer_args = ["engine", "consume", "--instance-id"].into_iter().map(String::from);
                let consumer_id = format!("drill{run_id}-c{i}");
                let mut consumer_args: Vec<String> = consumer_args.collect();
                consumer_args.extend([consumer_id.clone(), "--payment-timeout".into(), timeout]);
                consumer_args.extend(["--rig".into(), run_id.to_string()]);
                rig.consumers.push(Proc {
                    index: i,
                    instance_id: consumer_id.clone(),
                    url: None,
                    args: consumer_args,
                    env: env.clone(),
                    log: rig.dir.join(format!("{consumer_id}.log")),
                    child: None,
                });
            }
            rig.engines.push(Proc {
                index: i,
                url: Some(format!("http://127.0.0.1:{port}")),
                log: rig.dir.join(format!("{instance_id}.log")),
                instance_id,
                args,
                env,
                child: None,
            });
        }
        let binary = rig.binary.clone();
        for proc in rig.engines.iter_mut().chain(rig.consumers.iter_mut()) {
            proc.spawn(&binary)?;
        }
        for i in 0..rig.engines.len() {
            rig.wait_healthy(i, Duration::from_secs(30)).await?;
        }
        Ok(rig)
    }

    /// Waits until engine `i` (0-based) answers `/health`.
    pub async fn wait_healthy(&mut self, i: usize, within: Duration) -> Result<(), RunnerError> {
        let url = format!("{}/health", self.engines[i].url.as_deref().unwrap_or_default());
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Ok(r) = reqwest::get(&url).await {
                if r.status().is_success() {
                    return Ok(());
                }
            }
            if let Some(child) = self.engines[i].child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(RunnerError::Rig(format!(
                        "engine {} exited ({status}) before it answered; its log: {}",
                        self.engines[i].index,
                        self.engines[i].log.display()
                    )));
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(RunnerError::Rig(format!(
                    "engine {} did not answer /health within {within:?}; its log: {}",
                    self.engines[i].index,
                    self.engines[i].log.display()
                )));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Starts a process again with its arguments (the same instance id: it takes back its
    /// own pending messages).
    pub fn respawn(&mut self, consumers: bool, i: usize) -> Result<(), RunnerError> {
        let binary = self.binary.clone();
        let list = if consumers { &mut self.consumers } else { &mut self.engines };
        list[i].spawn(&binary)
    }

    pub fn instance_ids(&self) -> Vec<String> {
        self.engines.iter().map(|e| e.instance_id.clone()).collect()
    }

    /// The failover: the master killed, the lagging replica promoted, every Redis link (the
    /// engines' and the runner's) moved to it. Answers the new master's address.
    pub async fn fail_over(&mut self) -> Result<String, RunnerError> {
        let private = self
            .private_redis
            .as_mut()
            .ok_or_else(|| RunnerError::Rig("this rig has no Redis of its own to fail over".into()))?;
        let promoted = private.fail_over().await?;
        let moved: Vec<NewProxy> = self
            .api
            .all()
            .await?
            .into_iter()
            .filter(|p| p.name == RUNNER_REDIS_LINK || p.name.ends_with("-redis"))
            .map(|p| NewProxy { name: p.name, listen: p.listen, upstream: promoted.clone(), enabled: p.enabled })
            .collect();
        self.api.populate(&moved).await?;
        Ok(promoted)
    }

    /// Every fault ended, every process stopped, the proxy service shut down.
    pub async fn tear_down(&mut self) {
        let _ = self.api.reset().await;
        for proc in self.engines.iter_mut().chain(self.consumers.iter_mut()) {
            proc.stop(Duration::from_secs(5)).await;
        }
        if let Some(private) = self.private_redis.as_mut() {
            private.stop().await;
        }
        if let Some((stop, served)) = self.service.take() {
            let _ = stop.send(());
            let _ = served.await;
        }
    }
}

impl Rig {
    /// The rig's products off sale once the run is over and its processes stopped: their
    /// Redis keys removed from the sale's Redis (the failover drill's Redis of its own is gone
    /// with it). No engine sells them any more (only the rig's own did), and the sale's
    /// reading leaves a finished run's products out (`recon::reading::product_ids`).
    pub async fn take_off_sale(&self, conns: &Connections) -> Result<(), RunnerError> {
        let mut redis = conns.redis.clone();
        for &p in &self.products {
            let _: () = redis::cmd("DEL").arg(conns.keys.all_for_product(p)).query_async(&mut redis).await?;
        }
        Ok(())
    }
}

/// How many ids the rig passes over, looking for one no key uses, before it gives up.
const IDS_TRIED: u64 = 10_000;

/// Puts the plan's products on sale on this run's rig, each under a fresh id: above every
/// product in the database, and one under which the sale's Redis holds no key (issue 51: the
/// rig took the next id, overwrote the stock key another sale or an old run had left there,
/// and deleted them all at its end). An id taken meanwhile by another runner is passed over.
async fn put_on_sale(conns: &Connections, plan: &Plan, run_id: u64) -> Result<Vec<u64>, RunnerError> {
    let highest: Option<u64> =
        sqlx::query_scalar("SELECT MAX(product_id) FROM inventory").fetch_one(&conns.mysql).await?;
    let mut candidates = highest.unwrap_or(0) + 1..;
    let mut redis = conns.redis.clone();
    let mut products = Vec::new();
    for (n, product) in plan.rig.products.iter().enumerate() {
        let mut tried = 0;
        let id = loop {
            let id = candidates.next().expect("ids do not run out");
            tried += 1;
            if tried > IDS_TRIED {
                return Err(RunnerError::Rig(format!(
                    "no product id free of Redis keys among {IDS_TRIED} after {}",
                    id - IDS_TRIED
                )));
            }
            // One product's keys share its hash tag: one slot, one EXISTS.
            let used: u64 = redis::cmd("EXISTS").arg(conns.keys.all_for_product(id)).query_async(&mut redis).await?;
            if used > 0 {
                tracing::info!(product = id, keys = used, "the rig passes over a product id whose keys are in use");
                continue;
            }
            let inserted = sqlx::query(
                "INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit, rig) \
                 VALUES (?, ?, ?, ?, ?, ?)",
            )
            .bind(id)
            .bind(format!("drill {run_id} #{}", n + 1))
            .bind(product.stock)
            .bind(product.stock)
            .bind(product.per_user_limit)
            .bind(run_id)
            .execute(&conns.mysql)
            .await;
            match inserted {
                Ok(_) => break id,
                Err(sqlx::Error::Database(e)) if e.is_unique_violation() => continue,
                Err(e) => return Err(e.into()),
            }
        };
        // Warmed up as a sale is before it opens: the stock key, and the stream's group so no
        // reservation is read before a consumer exists.
        let _: () = redis::cmd("SET").arg(conns.keys.stock(id)).arg(product.stock).query_async(&mut redis).await?;
        crate::engine::consumer::ensure_group(&mut redis, &conns.keys, id).await?;
        products.push(id);
    }
    Ok(products)
}
