//! What vouching costs (issue 30), a dimension of `bench engine`: one engine through HTTP on a
//! private Redis with a replica ([`crate::sandbox::replicated`]), side by side in one run:
//!
//! - vouching off (`--replica-acks 0`): answered as soon as the reserve script ran;
//! - vouching on (the default, which finds the replica), the replica healthy: answered once a
//!   group's read back from the replica finds the reservation there
//!   ([`crate::engine::replicas`]);
//! - vouching on, the replica stalled (SIGSTOP after the engine started): every round runs
//!   out the timeout, and the engine writes each order to the DB before answering, in batches
//!   ([`crate::engine::write_through`]).
//!
//! The three run in turn, rotated each round so that the machine's drift falls on each alike;
//! the figures are the medians over the rounds. The replica is attached in all three (the
//! master replicates to it whether anyone waits or not). The stalled case sends fewer orders:
//! each one waits out a timeout, and a replica stopped for longer than a minute would be
//! dropped by its master (`repl-timeout`).

use std::path::Path;
use std::time::Duration;

use super::engine_process::EngineProcess;
use super::{BenchError, BenchProduct, Figure};
use crate::engine::replicas::DEFAULT_ACK_TIMEOUT;
use crate::load::{self, LoadConfig, LoadReport};
use crate::sandbox::replicated::{self, Replicated};
use stockguard_core::connect::Connections;
use stockguard_core::profile::ConnectionSettings;

/// How big the vouching runs are (`bench engine --vouching-orders/--stalled-orders/--vouching-rounds/
/// --vouching-clients`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VouchingPlan {
    /// Buyers of each run with vouching off and with the replica healthy.
    pub orders: u64,
    /// Buyers of each run with the replica stalled.
    pub stalled_orders: u64,
    /// Rounds of the three runs; the figures are the medians.
    pub rounds: u32,
    /// Requests outstanding at once: as in the rest of `bench engine` ([`super::CLIENTS`]), unless
    /// asked.
    pub clients: usize,
}

impl VouchingPlan {
    /// About a minute and a half on two cores.
    pub fn full() -> Self {
        Self { orders: 60_000, stalled_orders: 3_000, rounds: 3, clients: super::CLIENTS as usize }
    }

    /// Only checks that it still works.
    pub fn quick() -> Self {
        Self { orders: 600, stalled_orders: 100, rounds: 1, clients: super::CLIENTS as usize }
    }
}

/// One of the three settings measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Off,
    Healthy,
    Stalled,
}

impl Case {
    const ALL: [Case; 3] = [Case::Off, Case::Healthy, Case::Stalled];

    fn label(self) -> &'static str {
        match self {
            Case::Off => "vouching off (--replica-acks 0)",
            Case::Healthy => "vouching on, replica healthy",
            Case::Stalled => "vouching on, replica stalled (SIGSTOP)",
        }
    }

    /// `engine serve` flags beyond the bench's own: off is the opt-out, on is the default.
    fn flags(self) -> &'static [&'static str] {
        match self {
            Case::Off => &["--replica-acks", "0"],
            Case::Healthy | Case::Stalled => &[],
        }
    }
}

/// One run's figures, and what the engine said of it.
struct Run {
    accepted_per_sec: f64,
    p50_ms: f64,
    p99_ms: f64,
    accepted: u64,
    written_through: u64,
    /// The batches those were written in (`/health`'s `write_through.batches`).
    write_batches: u64,
    guarantee: String,
    /// Mean wait for one of the engine's DB connections (its `/metrics`, over the run).
    db_wait_ms: Option<f64>,
    /// Accepted orders a second from the first request until every accepted order was in the
    /// DB and checked: what the sale ran at with its DB writes counted, wherever they fell.
    end_to_end_per_sec: f64,
    /// The machine's busy CPU over the same span, per accepted order (every process: engine,
    /// Redis and its replica, MariaDB, the load generator and its checks).
    cpu_us_per_order: Option<f64>,
}

/// The three cases measured `plan.rounds` times on a private replicated Redis started under a
/// folder of its own and stopped at the end, whatever happens. `conns` gives the DB (the
/// bench's scratch database) and the key prefix; its Redis is not used.
pub async fn measure(
    conns: &Connections,
    exe: &Path,
    plan: &VouchingPlan,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<(Vec<Figure>, Vec<Figure>, Vec<String>), BenchError> {
    let failed = |what: &str, e: &dyn std::fmt::Display| BenchError::Engine(format!("{what}: {e}"));
    let dir = tempfile::tempdir().map_err(|e| failed("a folder for the replicated Redis", &e))?;
    progress("starting a private Redis with one replica");
    let pair = replicated::start(dir.path()).await.map_err(|e| failed("the replicated Redis", &e))?;
    let result = async {
        let settings = ConnectionSettings { redis_url: pair.url().into(), ..conns.settings.clone() };
        let redis =
            stockguard_core::connect::connect_redis(&settings).await.map_err(|e| failed("the replicated Redis", &e))?;
        let on_pair = Connections { redis, settings, ..conns.clone() };
        let mut runs: Vec<(Case, Run)> = Vec::new();
        for round in 0..plan.rounds {
            for i in 0..Case::ALL.len() {
                let case = Case::ALL[(i + round as usize) % Case::ALL.len()];
                progress(&format!("round {} of {}: {}", round + 1, plan.rounds, case.label()));
                let buyers = if case == Case::Stalled { plan.stalled_orders } else { plan.orders };
                runs.push((case, one_run(&on_pair, &pair, exe, case, buyers, plan.clients).await?));
            }
        }
        Ok::<_, BenchError>(runs)
    }
    .await;
    let stopped = pair.stop().await;
    let runs = result?;
    stopped.map_err(|e| failed("stopping the replicated Redis", &e))?;
    Ok(report(&runs, plan))
}

/// One engine on the pair with `case`'s flags sells `buyers` units of a product of its own.
async fn one_run(
    conns: &Connections,
    pair: &Replicated,
    exe: &Path,
    case: Case,
    buyers: u64,
    clients: usize,
) -> Result<Run, BenchError> {
    let product = BenchProduct::create(conns, buyers as i64, 1).await?;
    let engine = match EngineProcess::start_with(exe, conns, case.flags()).await {
        Ok(engine) => engine,
        Err(e) => {
            product.drop_keys(conns).await?;
            return Err(e);
        }
    };
    // Stalled once the engine has decided to vouch (it looked for replicas when it started,
    // and found this one): what it then meets is a replica that stopped answering.
    let stalled =
        if case == Case::Stalled { pair.stall().map_err(|e| BenchError::Engine(e.to_string())) } else { Ok(()) };
    let measured = async {
        stalled?;
        let cfg = LoadConfig {
            target: engine.url.clone(),
            products: vec![product.id],
            buyers,
            rate: 1_000_000,
            duration: Duration::from_secs(300),
            concurrency: clients,
            drain_timeout: Duration::from_secs(120),
        };
        let (cpu_before, started) = (busy_cpu(), std::time::Instant::now());
        let report = load::run(&conns.mysql, &cfg, &|_, _| {}).await?;
        let (took, cpu) = (started.elapsed(), busy_cpu().zip(cpu_before).map(|(after, before)| after - before));
        let said = engine_says(&engine.url).await;
        Ok::<_, BenchError>((report, took, cpu, said))
    }
    .await;
    let resumed = if case == Case::Stalled { pair.resume().await.map_err(|e| e.to_string()) } else { Ok(()) };
    engine.stop().await;
    product.drop_keys(conns).await?;
    let (report, took, cpu, (guarantee, written_through, write_batches)) = measured?;
    resumed.map_err(|e| BenchError::Engine(format!("the stalled replica did not catch up: {e}")))?;
    check(case, &report, &guarantee, written_through)?;
    Ok(Run {
        accepted_per_sec: report.accepted_per_sec,
        p50_ms: report.latency_p50_ms,
        p99_ms: report.latency_p99_ms,
        accepted: report.accepted,
        written_through,
        write_batches,
        guarantee,
        db_wait_ms: report.db_pool_wait_mean_ms,
        end_to_end_per_sec: report.accepted as f64 / took.as_secs_f64(),
        cpu_us_per_order: cpu
            .filter(|_| report.accepted > 0)
            .map(|busy| busy.as_secs_f64() * 1e6 / report.accepted as f64),
    })
}

/// The machine's busy CPU time so far, all cores (`/proc/stat`: user, nice, system, irq,
/// softirq and steal); `None` where there is no `/proc/stat`.
fn busy_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks = busy_ticks(stat.lines().next()?)?;
    Some(Duration::from_secs_f64(ticks as f64 / USER_HZ))
}

/// The unit of `/proc/stat`'s times: USER_HZ, 100 a second in Linux's ABI on every
/// architecture it runs this on, whatever the kernel's own tick.
const USER_HZ: f64 = 100.0;

/// The busy ticks of `/proc/stat`'s first line (`cpu  user nice system idle iowait irq
/// softirq steal ...`).
fn busy_ticks(line: &str) -> Option<u64> {
    let fields: Vec<u64> =
        line.strip_prefix("cpu ")?.split_whitespace().map(|f| f.parse().ok()).collect::<Option<_>>()?;
    let at = |i: usize| fields.get(i).copied().unwrap_or(0);
    (fields.len() >= 4).then(|| at(0) + at(1) + at(2) + at(5) + at(6) + at(7))
}

/// The guarantee the engine's `/health` names, its count of orders written through
/// (`stockguard_written_through_total` of `/metrics`) and the batches `/health` says they were
/// written in; what it did not say is left blank/0.
pub(super) async fn engine_says(url: &str) -> (String, u64, u64) {
    let health: Option<serde_json::Value> = match reqwest::get(format!("{url}/health")).await {
        Ok(r) => r.json().await.ok(),
        Err(_) => None,
    };
    let guarantee = health.as_ref().and_then(|h| h["accepted_guarantee"].as_str()).unwrap_or("not said").to_string();
    let batches = health.as_ref().and_then(|h| h["write_through"]["batches"].as_u64()).unwrap_or(0);
    let metrics = match reqwest::get(format!("{url}/metrics")).await {
        Ok(r) => r.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    };
    let written = metrics
        .lines()
        .find_map(|l| l.strip_prefix("stockguard_written_through_total "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or(0.0);
    (guarantee, written as u64, batches)
}

/// A run that lost, duplicated or oversold, or did not measure what its case names, measured
/// something else: the bench fails rather than report it.
fn check(case: Case, report: &LoadReport, guarantee: &str, written_through: u64) -> Result<(), BenchError> {
    let wrong = |why: String| Err(BenchError::Engine(format!("{}: {why}\n{}", case.label(), report.to_text())));
    if !report.holds() {
        return wrong("the run did not hold".into());
    }
    if report.accepted == 0 {
        return wrong("no order was accepted".into());
    }
    match case {
        Case::Off if guarantee != "none_opted_out" => wrong(format!("/health says `{guarantee}`, not none_opted_out")),
        Case::Off if written_through > 0 => {
            wrong(format!("{written_through} orders written through with vouching off"))
        }
        Case::Healthy | Case::Stalled if !matches!(guarantee, "replica" | "db_write_through") => {
            wrong(format!("/health says `{guarantee}`: the engine did not vouch"))
        }
        Case::Stalled if written_through == 0 => {
            wrong("no order was written through: the replica did not stall".into())
        }
        _ => Ok(()),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn report(runs: &[(Case, Run)], plan: &VouchingPlan) -> (Vec<Figure>, Vec<Figure>, Vec<String>) {
    let of = |case: Case, figure: fn(&Run) -> f64| {
        median(runs.iter().filter(|(c, _)| *c == case).map(|(_, r)| figure(r)).collect())
    };
    let rate = |case| of(case, |r| r.accepted_per_sec);
    let p99 = |case| of(case, |r| r.p99_ms);
    let end_to_end = |case| of(case, |r| r.end_to_end_per_sec);
    let cpu = |case| of(case, |r| r.cpu_us_per_order.unwrap_or(f64::NAN));
    let mut figures = Vec::new();
    for case in Case::ALL {
        let label = case.label();
        figures.push(Figure::new(
            &format!("{label}: accepted orders/s ({} concurrent)", plan.clients),
            rate(case),
            "orders/s",
        ));
        figures.push(Figure::new(&format!("{label}: latency p50"), of(case, |r| r.p50_ms), "ms"));
        figures.push(Figure::new(&format!("{label}: latency p99"), p99(case), "ms"));
        figures.push(Figure::new(
            &format!("{label}: end to end (accepted and in the DB)"),
            end_to_end(case),
            "orders/s",
        ));
        figures.push(Figure::new(&format!("{label}: machine CPU per accepted order"), cpu(case), "us"));
    }
    let timeout_ms = DEFAULT_ACK_TIMEOUT.as_secs_f64() * 1000.0;
    let ratios = vec![
        Figure::new("vouching on, replica healthy / off: accepted orders/s", rate(Case::Healthy) / rate(Case::Off), ""),
        Figure::new("vouching on, replica healthy / off: p99", p99(Case::Healthy) / p99(Case::Off), ""),
        Figure::new(
            "vouching on, replica healthy / off: end to end orders/s",
            end_to_end(Case::Healthy) / end_to_end(Case::Off),
            "",
        ),
        Figure::new(
            "vouching on, replica healthy / off: machine CPU per order",
            cpu(Case::Healthy) / cpu(Case::Off),
            "",
        ),
        Figure::new("vouching on, replica stalled / off: accepted orders/s", rate(Case::Stalled) / rate(Case::Off), ""),
        Figure::new(
            &format!("vouching on, replica stalled: p99 / the {timeout_ms:.0} ms acknowledgement timeout"),
            p99(Case::Stalled) / timeout_ms,
            "",
        ),
    ];
    let mut notes = vec![format!(
        "vouching: a private redis-server with one replica on loopback; {} buyers per run off and healthy, {} \
         stalled, {} outstanding, {} round(s) rotated, medians; the engine's default acknowledgement \
         timeout ({timeout_ms:.0} ms)",
        plan.orders, plan.stalled_orders, plan.clients, plan.rounds
    )];
    for (case, r) in runs {
        notes.push(format!(
            "vouching run, {}: {:.0} accepted/s, p50 {:.2} ms, p99 {:.2} ms, end to end {:.0}/s, machine CPU {} an \
             order; {} of {} accepted written through to the DB before their answer, in {} batch(es); mean wait for \
             a DB connection {}; /health said {}",
            case.label(),
            r.accepted_per_sec,
            r.p50_ms,
            r.p99_ms,
            r.end_to_end_per_sec,
            r.cpu_us_per_order.map_or("not measured".into(), |us| format!("{us:.0} us")),
            r.written_through,
            r.accepted,
            r.write_batches,
            r.db_wait_ms.map_or("not measured".into(), |ms| format!("{ms:.2} ms")),
            r.guarantee
        ));
    }
    (figures, ratios, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_cpu_counts_user_nice_system_irq_softirq_and_steal_but_not_idle_or_iowait() {
        assert_eq!(busy_ticks("cpu  100 2 30 5000 40 6 7 8 0 0"), Some(100 + 2 + 30 + 6 + 7 + 8));
        assert_eq!(busy_ticks("cpu0 100 2 30 5000"), None, "a core's line, not the machine's");
        assert_eq!(busy_ticks("cpu  x 2 30 5000"), None);
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
