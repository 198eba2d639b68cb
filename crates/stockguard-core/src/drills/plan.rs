//! A drill file (`drills/*.toml`): the rig, the load, the fault timeline, the checks, the
//! SLOs and the abort conditions of one drill, versioned with the code.
//!
//! A run records the file's [`Plan::hash`] (of the file's bytes as given) and the load's seed,
//! so a re-run of the same file sends the same request schedule and can be compared with it.
//! The built-in drills are compiled in ([`builtin`]); `stockguard drill run FILE` takes any
//! other file.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The built-in drills, one file each, as the repository's `drills/` holds them.
const BUILTIN: [(&str, &str); 9] = [
    ("redis-down", include_str!("../../../../drills/redis-down.toml")),
    ("redis-slow", include_str!("../../../../drills/redis-slow.toml")),
    ("mq-backlog", include_str!("../../../../drills/mq-backlog.toml")),
    ("db-slow", include_str!("../../../../drills/db-slow.toml")),
    ("consumer-crash", include_str!("../../../../drills/consumer-crash.toml")),
    ("engine-partition", include_str!("../../../../drills/engine-partition.toml")),
    ("lock-holder-pause", include_str!("../../../../drills/lock-holder-pause.toml")),
    ("redis-failover-loss", include_str!("../../../../drills/redis-failover-loss.toml")),
    ("timeout-storm", include_str!("../../../../drills/timeout-storm.toml")),
];

/// The built-in drill whose name is a typo away from `name` (at most 3 edits), if any.
fn closest_builtin(name: &str) -> Option<&'static str> {
    BUILTIN
        .iter()
        .map(|(n, _)| (strsim::levenshtein(n, name), *n))
        .filter(|(distance, _)| *distance <= 3)
        .min()
        .map(|(_, n)| n)
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("no built-in drill is called {0:?}; `stockguard drill list` shows them")]
    NoSuchDrill(String),
    #[error("cannot read the drill file {path}: {source}")]
    Unreadable { path: String, source: std::io::Error },
    /// A name that is neither a built-in drill nor a file, close to a built-in one.
    #[error("no built-in drill and no file is called {name:?}: did you mean {closest}? (`stockguard drill list` shows them)")]
    DidYouMean { name: String, closest: &'static str },
    #[error("the drill file is not valid: {0}")]
    Syntax(#[from] toml::de::Error),
    #[error("the drill file is not valid: {0}")]
    Invalid(String),
}

/// One drill, as its file says.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub name: String,
    pub title_en: String,
    pub title_zh: String,
    /// What the drill proves, for the report.
    pub description: String,
    /// The same in Chinese (the window and the report in Chinese); a file without it is
    /// described in English in both.
    #[serde(default)]
    pub description_zh: Option<String>,
    pub rig: Rig,
    pub load: Load,
    #[serde(default)]
    pub faults: Vec<FaultStep>,
    #[serde(default)]
    pub slo: Slo,
    #[serde(default)]
    pub abort: Abort,
    /// After the load ends, how long every accepted order has to reach the DB.
    #[serde(default = "default_drain_s")]
    pub drain_s: u64,
    /// When the faults are over, lead the sale back to Redis with the guided exit if any
    /// engine is on the DB path.
    #[serde(default = "yes")]
    pub guided_exit: bool,
}

impl Plan {
    /// What the drill proves, in `lang` when the file says it in that language.
    pub fn description_in(&self, lang: crate::lang::Lang) -> &str {
        match (lang, &self.description_zh) {
            (crate::lang::Lang::Zh, Some(zh)) => zh,
            _ => &self.description,
        }
    }
}

fn default_drain_s() -> u64 {
    30
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rig {
    /// Engine instances the runner starts, each behind its own Redis and MySQL proxies.
    pub engines: u32,
    pub products: Vec<RigProduct>,
    /// Seconds an order may stay unpaid (the timeout-storm drill makes it short).
    #[serde(default = "default_payment_timeout_s")]
    pub payment_timeout_s: u64,
    /// Run the queue consumers as processes of their own (one per engine) instead of inside
    /// the engines, so a fault can stop them while the order API goes on selling.
    #[serde(default)]
    pub separate_consumers: bool,
    /// Replicas that must have a reservation before an engine answers "accepted" (`engine
    /// serve --replica-acks`); 0: answer at once. Only the failover drill's own Redis has a
    /// replica to wait for.
    #[serde(default)]
    pub replica_acks: u32,
}

fn default_payment_timeout_s() -> u64 {
    900
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RigProduct {
    /// Product ids are chosen by the runner (fresh ones each run, above every existing id):
    /// the file names a product by its position only.
    pub stock: i64,
    #[serde(default = "one")]
    pub per_user_limit: i64,
}

fn one() -> i64 {
    1
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Load {
    /// Distinct buyers; each asks once for each product.
    pub buyers: u64,
    /// Requests per second, over all engines.
    pub rate: u32,
    pub duration_s: u64,
    /// Seeds the request schedule: buyer order, engine per request, pay/cancel decisions.
    pub seed: u64,
    /// Requests outstanding at most. Buyers do not wait for each other's answers (the load
    /// sends each request at its time), so this is a safety cap, not a pace: at the drill's
    /// rate, a fault that holds each request until its 5 s timeout needs rate x 5 of them.
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// Share of accepted orders the buyer pays (the rest wait, or cancel).
    #[serde(default)]
    pub pay: f64,
    /// Share of accepted orders the buyer cancels.
    #[serde(default)]
    pub cancel: f64,
}

fn default_concurrency() -> usize {
    10_000
}

/// The most requests a drill's schedule may be drawn from (`load.buyers` x products, each
/// buyer asking once for each product): the runner draws and shuffles them all in memory before
/// the load starts, so a file beyond this is refused when it is read, before anything is put on
/// sale.
pub const MAX_SCHEDULE_PAIRS: u64 = 2_000_000;

/// Where a fault lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// Every engine's Redis link.
    Redis,
    /// Every engine's MySQL link.
    Mysql,
    /// The engine processes themselves (kill, stop).
    Engine,
    /// The queue consumers, which the rig runs as their own processes when the file says
    /// `rig.separate_consumers` (as a real deployment runs its MQ consumers).
    Consumers,
    /// The rewrite the runner starts (its holder is paused past its lock).
    Rewrite,
    /// The Redis the engines use: its master dies, a lagging replica is promoted.
    RedisMaster,
    /// The payment deadline of the unpaid orders (they all come due at once).
    PaymentDeadline,
}

/// What the fault does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Links refuse new connections and cut the open ones (Toxiproxy: proxy disabled).
    Down,
    /// Every reply waits `latency_ms` (Toxiproxy `latency`, downstream).
    Latency,
    /// Links accept connections and answer nothing until the fault ends, then deliver what
    /// they held (a network partition as TCP lives it; a `latency` toxic of an hour).
    Blackhole,
    /// Connections reset after `latency_ms` (Toxiproxy `reset_peer`).
    ResetPeer,
    /// Bytes trickle at `rate_kb` KB/s (Toxiproxy `bandwidth`).
    Bandwidth,
    /// The process is killed with SIGKILL and started again when the fault ends.
    Kill,
    /// The process is stopped (SIGSTOP) and continued (SIGCONT) when the fault ends.
    Stop,
    /// Redis master killed, its replica (replication paused first, so it lags) promoted.
    Failover,
    /// A rewrite's holder stalls past its lock TTL while a second rewrite runs.
    PauseHolder,
    /// Unpaid orders' deadlines moved to now: they all close while sales go on.
    ExpireUnpaid,
}

/// One step of the fault timeline.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultStep {
    pub name: String,
    /// The name in Chinese, for the window in Chinese (the timeline records `name`).
    #[serde(default)]
    pub name_zh: Option<String>,
    pub target: Target,
    pub action: Action,
    /// Seconds after the load starts.
    pub at_s: f64,
    /// How long it lasts (0 for a one-off: a failover, a deadline moved).
    #[serde(default)]
    pub for_s: f64,
    /// Only these engines (1-based); every engine when empty.
    #[serde(default)]
    pub engines: Vec<u32>,
    #[serde(default)]
    pub latency_ms: u64,
    #[serde(default)]
    pub rate_kb: u64,
}

impl FaultStep {
    pub fn start(&self) -> Duration {
        Duration::from_secs_f64(self.at_s)
    }

    pub fn end(&self) -> Duration {
        Duration::from_secs_f64(self.at_s + self.for_s)
    }
}

/// What the drill promises, checked at the end (and shown with its figure).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Slo {
    /// From the fault's start to every engine on the DB path.
    pub time_to_db_path_ms: Option<u64>,
    /// From the last fault's end to drift 0 and every engine back on Redis.
    pub recovery_s: Option<f64>,
    /// Answers that were neither accepted nor a sale's own "no" (sold out, limit), over all.
    pub buyer_error_rate: Option<f64>,
    pub p99_ms: Option<f64>,
    /// The backlog caught up at least this many times faster than orders arrived.
    pub catch_up_multiple: Option<f64>,
}

/// What stops the drill early. Oversell always does and cannot be turned off.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Abort {
    /// Abort when a second's buyer error rate goes above this.
    pub buyer_error_rate_above: Option<f64>,
    /// Abort when drift outside every fault's window exceeds this many units.
    pub drift_outside_faults_above: Option<i64>,
}

impl Plan {
    /// Parses and checks a drill file.
    pub fn parse(text: &str) -> Result<Self, PlanError> {
        let plan: Plan = toml::from_str(text)?;
        plan.validate()?;
        Ok(plan)
    }

    /// A built-in drill by name.
    pub fn builtin(name: &str) -> Result<(Self, String), PlanError> {
        let (_, text) =
            BUILTIN.iter().find(|(n, _)| *n == name).ok_or_else(|| PlanError::NoSuchDrill(name.to_string()))?;
        Ok((Self::parse(text)?, text.to_string()))
    }

    /// A built-in drill by name, or else a file by path.
    pub fn load(name_or_path: &str) -> Result<(Self, String), PlanError> {
        if BUILTIN.iter().any(|(n, _)| *n == name_or_path) {
            return Self::builtin(name_or_path);
        }
        let text = std::fs::read_to_string(name_or_path).map_err(|source| {
            match (source.kind(), closest_builtin(name_or_path)) {
                (std::io::ErrorKind::NotFound, Some(closest)) => {
                    PlanError::DidYouMean { name: name_or_path.to_string(), closest }
                }
                _ => PlanError::Unreadable { path: name_or_path.to_string(), source },
            }
        })?;
        Ok((Self::parse(&text)?, text))
    }

    /// The hash a run records: of the file's bytes, so any edit changes it.
    pub fn hash(text: &str) -> String {
        let digest = Sha256::digest(text.as_bytes());
        digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
    }

    /// Scales the load and the timeline down by `factor` (0 < factor <= 1) for CI's short
    /// form: the rate, the buyers and the durations shrink by `factor`, so the requests by its
    /// square, and the stock with them, so the drill still sells out at the same point of its
    /// load and its faults still fall mid-sale. The rate shrinks too so that a small machine
    /// (CI's two cores, debug builds) can send the schedule it is judged on
    /// (`load_sent_as_planned`). The scaled plan is checked again: a fault the rounding of the
    /// load's length left outside it is refused, as in a file.
    pub fn shortened(self, factor: f64) -> Result<Self, PlanError> {
        let plan = self.scaled(factor);
        plan.validate()?;
        Ok(plan)
    }

    fn scaled(mut self, factor: f64) -> Self {
        let f = factor.clamp(0.01, 1.0);
        let scale_u = |v: u64| ((v as f64 * f).round() as u64).max(1);
        self.load.buyers = scale_u(self.load.buyers);
        self.load.duration_s = scale_u(self.load.duration_s);
        self.load.rate = ((f64::from(self.load.rate) * f).round() as u32).max(1);
        for p in &mut self.rig.products {
            p.stock = ((p.stock as f64 * f * f).round() as i64).max(1);
        }
        for step in &mut self.faults {
            step.at_s *= f;
            step.for_s *= f;
        }
        self.drain_s = scale_u(self.drain_s).max(10);
        // The file's words give the full form's times ("300 ms for 8 s"): the report says
        // beside them what this run did instead.
        if f < 1.0 {
            let (en, zh) = self.short_form_words(f);
            self.description = format!("{} {en}", self.description.trim_end());
            if let Some(words) = &mut self.description_zh {
                *words = format!("{}{zh}", words.trim_end());
            }
        }
        self
    }

    /// What the short form at `f` runs, in English and Chinese: its load and each fault's
    /// times, as scaled.
    fn short_form_words(&self, f: f64) -> (String, String) {
        let secs = |s: f64| {
            let text = format!("{s:.1}");
            text.strip_suffix(".0").map(str::to_string).unwrap_or(text)
        };
        let (l, mut en, mut zh) = (&self.load, Vec::new(), Vec::new());
        for step in &self.faults {
            let name_zh = step.name_zh.as_deref().unwrap_or(&step.name);
            if step.for_s > 0.0 {
                en.push(format!("{} at {} s for {} s", step.name, secs(step.at_s), secs(step.for_s)));
                zh.push(format!("{name_zh}于第 {} 秒起持续 {} 秒", secs(step.at_s), secs(step.for_s)));
            } else {
                en.push(format!("{} at {} s", step.name, secs(step.at_s)));
                zh.push(format!("{name_zh}于第 {} 秒", secs(step.at_s)));
            }
        }
        let faults_en = if en.is_empty() { String::new() } else { format!("; {}", en.join("; ")) };
        let faults_zh = if zh.is_empty() { String::new() } else { format!("；{}", zh.join("；")) };
        (
            format!(
                "Run in its short form (x{f}): {} buyers at {}/s for {} s{faults_en}.",
                l.buyers, l.rate, l.duration_s
            ),
            format!(
                "（本次为短版，x{f}：{} 名买家，每秒 {} 个请求，持续 {} 秒{faults_zh}。）",
                l.buyers, l.rate, l.duration_s
            ),
        )
    }

    fn validate(&self) -> Result<(), PlanError> {
        let bad = |m: String| Err(PlanError::Invalid(m));
        if self.name.is_empty() || self.name.len() > 64 {
            return bad("name must be 1 to 64 characters".into());
        }
        if self.faults.iter().any(|f| f.target == Target::Consumers) && !self.rig.separate_consumers {
            return bad("a fault on the consumers needs rig.separate_consumers = true".into());
        }
        if self.rig.replica_acks > 0 && !self.faults.iter().any(|f| f.target == Target::RedisMaster) {
            return bad("rig.replica_acks needs a replica: only a drill with a redis_master fault has one".into());
        }
        if !(1..=16).contains(&self.rig.engines) {
            return bad(format!("rig.engines must be 1 to 16, not {}", self.rig.engines));
        }
        if self.rig.products.is_empty() || self.rig.products.iter().any(|p| p.stock < 1 || p.per_user_limit < 1) {
            return bad("rig.products needs at least one product, each with stock and per_user_limit >= 1".into());
        }
        if self.load.buyers == 0 || self.load.rate == 0 || self.load.duration_s == 0 || self.load.concurrency == 0 {
            return bad("load.buyers, load.rate, load.duration_s and load.concurrency must be at least 1".into());
        }
        let pairs = self.load.buyers.saturating_mul(self.rig.products.len() as u64);
        if pairs > MAX_SCHEDULE_PAIRS {
            return bad(format!(
                "load.buyers = {}: {} buyers x {} products is {pairs} requests to draw, above the {MAX_SCHEDULE_PAIRS} a schedule may hold",
                self.load.buyers,
                self.load.buyers,
                self.rig.products.len()
            ));
        }
        let share = |v: f64| (0.0..=1.0).contains(&v);
        if !share(self.load.pay) || !share(self.load.cancel) || self.load.pay + self.load.cancel > 1.0 {
            return bad("load.pay and load.cancel are shares between 0 and 1 whose sum is at most 1".into());
        }
        for step in &self.faults {
            if step.at_s < 0.0 || step.for_s < 0.0 || !step.at_s.is_finite() || !step.for_s.is_finite() {
                return bad(format!("fault {:?}: at_s and for_s must be 0 or more", step.name));
            }
            // A fault that begins once the load has ended proves nothing: no order meets it.
            if step.at_s >= self.load.duration_s as f64 {
                return bad(format!(
                    "fault {:?} begins at {} s, when the load ({} s) has ended: no order would meet it",
                    step.name, step.at_s, self.load.duration_s
                ));
            }
            // A fault still in force after the load proves nothing more (no order meets its
            // end) and holds the run and its recovery past what the file's load measures.
            let load_s = self.load.duration_s as f64;
            if step.at_s + step.for_s > load_s + 1e-9 {
                return bad(format!(
                    "fault {:?}: for_s = {} runs it to {} s, {} s past the load's end (load.duration_s = {}): end it within the load",
                    step.name,
                    trimmed(step.for_s),
                    trimmed(step.at_s + step.for_s),
                    trimmed(step.at_s + step.for_s - load_s),
                    self.load.duration_s
                ));
            }
            if let Some(e) = step.engines.iter().find(|e| **e == 0 || **e > self.rig.engines) {
                return bad(format!("fault {:?}: engine {e} is not one of 1..={}", step.name, self.rig.engines));
            }
            if !step.fits() {
                return bad(format!("fault {:?}: {:?} cannot be done to {:?}", step.name, step.action, step.target));
            }
            if matches!(step.action, Action::Latency | Action::ResetPeer) && step.latency_ms == 0 {
                return bad(format!("fault {:?}: {:?} needs latency_ms", step.name, step.action));
            }
            if step.action == Action::Bandwidth && step.rate_kb == 0 {
                return bad(format!("fault {:?}: bandwidth needs rate_kb", step.name));
            }
        }
        Ok(())
    }
}

/// Seconds as a file writes them: `3`, `2.5`, `0.9` (no float noise from the short form).
fn trimmed(s: f64) -> String {
    let text = format!("{s:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl FaultStep {
    /// Whether the action makes sense for the target.
    fn fits(&self) -> bool {
        use Action::*;
        match self.target {
            Target::Redis | Target::Mysql => matches!(self.action, Down | Latency | Blackhole | ResetPeer | Bandwidth),
            Target::Engine | Target::Consumers => matches!(self.action, Kill | Stop),
            Target::Rewrite => self.action == PauseHolder,
            Target::RedisMaster => self.action == Failover,
            Target::PaymentDeadline => self.action == ExpireUnpaid,
        }
    }
}

/// The built-in drills' names and titles, for `drill list` and the console.
pub fn builtin() -> Vec<Plan> {
    BUILTIN.iter().map(|(_, text)| Plan::parse(text).expect("a built-in drill parses (tested)")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_of_a_built_in_drill_is_answered_with_the_name_it_was_close_to() {
        let err = Plan::load("redis-slo").unwrap_err();
        assert!(matches!(err, PlanError::DidYouMean { closest: "redis-slow", .. }), "{err}");
        assert!(err.to_string().contains("did you mean redis-slow?"), "{err}");
        let far = Plan::load("no-such-thing-at-all.toml").unwrap_err();
        assert!(matches!(far, PlanError::Unreadable { .. }), "nothing close: the file error as it was: {far}");
    }

    #[test]
    fn every_builtin_drill_parses_and_is_named_for_its_file() {
        for (name, text) in BUILTIN {
            let plan = Plan::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(plan.name, name);
        }
    }

    #[test]
    fn the_hash_changes_with_any_edit_and_not_otherwise() {
        let (_, text) = Plan::builtin("redis-down").unwrap();
        assert_eq!(Plan::hash(&text), Plan::hash(&text.clone()));
        assert_ne!(Plan::hash(&text), Plan::hash(&text.replace("seed = ", "seed = 1")));
    }

    #[test]
    fn a_fault_that_does_not_fit_its_target_is_refused_by_name() {
        let (_, text) = Plan::builtin("redis-down").unwrap();
        let broken = format!("{text}\n[[faults]]\nname = \"odd\"\ntarget = \"redis\"\naction = \"kill\"\nat_s = 1\n");
        let err = Plan::parse(&broken).unwrap_err().to_string();
        assert!(err.contains("\"odd\"") && err.contains("Kill"), "{err}");
    }

    #[test]
    fn a_fault_that_begins_after_the_load_has_ended_is_refused_in_a_file_and_after_scaling() {
        let (plan, text) = Plan::builtin("redis-down").unwrap();
        let late = plan.load.duration_s + 10;
        let file = format!(
            "{text}\n[[faults]]\nname = \"late\"\ntarget = \"redis\"\naction = \"down\"\nat_s = {late}\nfor_s = 1\n"
        );
        let err = Plan::parse(&file).unwrap_err().to_string();
        assert!(err.contains("\"late\"") && err.contains("has ended"), "{err}");
        // Just inside the load in the file; the short form rounds the load's length down past it.
        let mut edge = plan.clone();
        edge.load.duration_s = 4;
        edge.faults[0].at_s = 3.9;
        edge.faults[0].for_s = 0.1;
        edge.validate().expect("inside the load");
        let err = edge.shortened(0.3).unwrap_err().to_string();
        assert!(err.contains("has ended"), "{err}");
        // The short forms the console offers and CI runs.
        for (name, _) in BUILTIN {
            for f in [0.1, 0.3] {
                let (plan, _) = Plan::builtin(name).unwrap();
                plan.shortened(f).unwrap_or_else(|e| panic!("{name} --short {f}: {e}"));
            }
        }
    }

    #[test]
    fn the_short_form_says_beside_the_files_words_what_it_ran() {
        let (full, _) = Plan::builtin("redis-slow").unwrap();
        assert!(!full.description.contains("short form"), "{}", full.description);
        let short = full.clone().shortened(0.1).unwrap();
        let fault = &short.faults[0];
        assert!(short.description.starts_with(full.description.trim_end()), "{}", short.description);
        let said = format!("at {:.1} s for {:.1} s", fault.at_s, fault.for_s);
        assert!(
            short.description.contains("short form (x0.1)") && short.description.contains(&said),
            "{}",
            short.description
        );
        assert!(short.description.contains(&format!("{} buyers at {}/s", short.load.buyers, short.load.rate)));
        let zh = short.description_zh.as_deref().unwrap();
        assert!(zh.contains("短版") && zh.contains(&format!("持续 {:.1} 秒", fault.for_s)), "{zh}");
        // The full form is left as its file says.
        assert_eq!(full.clone().shortened(1.0).unwrap().description, full.description);
    }

    #[test]
    fn a_schedule_too_large_to_draw_is_refused_in_one_line_naming_load_buyers() {
        let (_, text) = Plan::builtin("redis-down").unwrap();
        let err = Plan::parse(&text.replace("buyers = 16000", "buyers = 10000000000")).unwrap_err().to_string();
        assert!(err.contains("load.buyers = 10000000000") && !err.contains('\n'), "{err}");
    }

    #[test]
    fn a_fault_that_runs_past_the_load_is_refused_in_one_line_naming_for_s() {
        let (_, text) = Plan::builtin("redis-down").unwrap();
        let err = Plan::parse(&text.replace("for_s = 8", "for_s = 41")).unwrap_err().to_string();
        assert!(err.contains("for_s = 41") && err.contains("29 s past the load's end") && !err.contains('\n'), "{err}");
        Plan::parse(&text.replace("for_s = 8", "for_s = 12")).expect("a fault ending with the load is fine");
    }

    #[test]
    fn an_unknown_field_is_refused_rather_than_ignored() {
        let (_, text) = Plan::builtin("redis-down").unwrap();
        let err = Plan::parse(&text.replace("[load]", "[load]\nbuyer = 5")).unwrap_err().to_string();
        assert!(err.contains("buyer"), "{err}");
    }
}
