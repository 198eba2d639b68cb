//! `stockguard adapter ...` and the reading over an adapter: the console on a sale Stockguard
//! did not build. The global `--adapter FILE` (or `STOCKGUARD_ADAPTER`) names the sale's
//! adapter file; the profile's MySQL and Redis URLs are the sale's own (a SELECT-only account
//! will do); `--state-url` (or `STOCKGUARD_STATE_URL`) is Stockguard's own database for
//! baselines, audit and acknowledgements. A profile may name both (`adapter`, `state_url`):
//! the flag, then its variable, then the profile.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Subcommand;

use super::output::say;
use super::{connect, output, CliError};
use stockguard_core::adapter::check::CheckReport;
use stockguard_core::adapter::repair::{DeltaRepair, DeltaRequest};
use stockguard_core::adapter::{self, state, AdapterReading, OpenedSale};
use stockguard_core::profile::ConnectionSettings;
use stockguard_core::sale::{self, Sale};
use stockguard_core::ProductId;

/// Where the adapter and the state database are: the global options (a flag, else its
/// environment variable), else the chosen profile's `adapter` and `state_url`.
#[derive(Debug, Clone, Default)]
pub struct AdapterOpts {
    pub file: Option<PathBuf>,
    /// From `--state-url` or `STOCKGUARD_STATE_URL`; the profile's (with its `state`
    /// password) is taken when the sale is opened.
    pub state_url: Option<String>,
}

impl AdapterOpts {
    /// The flag (or its variable), else the adapter file of the profile `--profile` (or
    /// `STOCKGUARD_PROFILE`, or the local sandbox by default) names. A profiles file that
    /// cannot be read names none here: connecting reports it.
    pub fn resolve(file: Option<PathBuf>, state_url: Option<String>, profile: Option<&str>) -> Self {
        Self { file: sale::open::adapter_file(file.as_deref(), profile), state_url }
    }
}

#[derive(Debug, Subcommand)]
pub enum AdapterCommand {
    /// Propose an adapter file for the sale the profile points at: its schema (column names
    /// and comments), its orders per status and a sample of its Redis keys. Reads only; what
    /// it could not decide is marked UNDECIDED.
    Init {
        /// The sale's name in the state database (default: the database's name).
        #[arg(long)]
        name: Option<String>,
        /// Sample only keys matching this SCAN pattern (say `seckill:*`).
        #[arg(long, default_value = "*")]
        keys: String,
        /// At most this many keys are sampled.
        #[arg(long, default_value_t = 20_000)]
        scan_limit: usize,
        /// Write the proposal to this file (refused when it exists) instead of printing it.
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Every table, column, key and queue the adapter names exists, with the orders counted
    /// per status and a sample of each key.
    Check {
        #[arg(long)]
        json: bool,
    },
    /// Record each product's initial stock as what is left plus what live orders hold now,
    /// for a sale that stores none (in the state database, audited).
    Baseline {
        /// Why: goes to the audit log.
        #[arg(long)]
        reason: String,
        #[arg(long)]
        json: bool,
    },
    /// Orders a buyer was told were taken that never became a row: entries the sale's
    /// consumer acknowledged (a Redis stream keeps them until trimmed) whose order id has no
    /// row. Reads only; the newest --limit delivered entries since --since, per stream.
    Lost {
        /// The oldest stream entry id looked at (default: the stream's start).
        #[arg(long, default_value = "-")]
        since: String,
        /// The newest delivered entries read at most, per stream.
        #[arg(long, default_value_t = adapter::lost::DEFAULT_LIMIT)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Apply a product's settled drift to the sale's Redis counter as an INCRBY, where the
    /// adapter allows it (`[repair] rewrite = "delta"`).
    Repair {
        /// The product, as the sale keys it (a number, or text such as SKU-A).
        #[arg(long)]
        product: ProductId,
        /// Why: goes to the audit log.
        #[arg(long, default_value = "")]
        reason: String,
        /// Show what it would add, change nothing (no lock taken).
        #[arg(long)]
        dry_run: bool,
        /// The product id typed again (required on production without a terminal).
        #[arg(long)]
        confirm: Option<ProductId>,
        /// The settled drift you reviewed (the dry run prints it): the repair runs only while
        /// the drift is still this, else nothing is written. Required on production.
        #[arg(long, allow_hyphen_values = true)]
        expect_drift: Option<i64>,
        #[arg(long)]
        json: bool,
    },
}

/// An adapter sale, opened (the core's one way, [`sale::open()`]), with the settings it was
/// opened with: the sale's fields read through it (`sale.file`, `sale.links()`).
pub struct Opened {
    pub sale: Arc<OpenedSale>,
    pub settings: ConnectionSettings,
}

impl std::ops::Deref for Opened {
    type Target = OpenedSale;
    fn deref(&self) -> &OpenedSale {
        &self.sale
    }
}

/// Opens the sale named by `--adapter` (an error when none was given), connecting to what the
/// file names and nothing else.
pub async fn open(opts: &AdapterOpts, profile: Option<&str>) -> Result<Opened, CliError> {
    let Some(path) = &opts.file else {
        return Err(CliError::Refused(
            "no adapter file: give --adapter FILE (or STOCKGUARD_ADAPTER, or a profile's `adapter`); docs/adapters/ has \
             one per kind of sale"
                .into(),
        ));
    };
    match super::open_sale(profile, opts, Some(path)).await? {
        Sale::Adapter(a) => Ok(Opened { sale: a.sale, settings: a.settings }),
        Sale::Ours(_) => unreachable!("an adapter file was given"),
    }
}

pub async fn run(cmd: AdapterCommand, opts: &AdapterOpts, profile: Option<&str>) -> Result<(), CliError> {
    if let AdapterCommand::Init { name, keys, scan_limit, out, json } = cmd {
        return init(profile, adapter::init::InitOptions { name, keys, scan_limit }, out, json).await;
    }
    let sale = open(opts, profile).await?;
    let links = sale.links();
    match cmd {
        AdapterCommand::Check { json } => {
            let report = adapter::check::check(&sale.file, links.db, links.redis).await?;
            if json {
                output::json(&report);
            } else {
                print_check(&report);
            }
            match report.problems.first() {
                Some(first) => Err(CliError::Refused(first.clone())),
                None => Ok(()),
            }
        }
        AdapterCommand::Baseline { reason, json } => {
            let pool = sale.state.as_ref().ok_or(adapter::AdapterError::NoStateDb)?;
            let readings = adapter::read(&sale.file, &links, &Default::default(), &[]).await?;
            let recorded = state::record_baselines(pool, &sale.settings, &sale.file, &readings, &reason).await?;
            if json {
                output::json(&recorded);
            } else {
                for b in &recorded {
                    let was = b.previous.map_or(String::new(), |p| format!(" (was {p})"));
                    say!("product {}: initial stock {}{was}", b.product_id, b.initial_stock);
                }
                say!("{} baselines recorded for sale {}", recorded.len(), sale.file.sale.name);
            }
            Ok(())
        }
        AdapterCommand::Init { .. } => unreachable!("answered above"),
        AdapterCommand::Lost { since, limit, json } => {
            let ids = adapter::db::product_ids(links.db, &sale.file).await?;
            let scan =
                adapter::lost::scan(&sale.file, &links, &ids, &adapter::lost::LostOptions { since, limit }).await?;
            if json {
                output::json(&scan);
            } else {
                print_lost(&scan);
            }
            Ok(())
        }
        AdapterCommand::Repair { product, reason, dry_run, confirm, expect_drift, json } => {
            let args = RepairArgs {
                products: vec![product],
                reason,
                dry_run,
                confirm: confirm.into_iter().collect(),
                expect_drift: expect_drift.into_iter().collect(),
                json,
            };
            repair_products(&sale, &args).await
        }
    }
}

/// A delta repair asked for, by `stockguard rewrite` or `stockguard adapter repair`.
pub struct RepairArgs {
    pub products: Vec<ProductId>,
    pub reason: String,
    pub dry_run: bool,
    /// The product ids typed again (production).
    pub confirm: Vec<ProductId>,
    /// The drift reviewed for each product, in the order of `products` (none, or one each).
    pub expect_drift: Vec<i64>,
    pub json: bool,
}

/// `stockguard rewrite` over an adapter: each product's delta repair, the one core path of
/// `adapter repair` too.
pub async fn rewrite(opts: &AdapterOpts, profile: Option<&str>, args: &RepairArgs) -> Result<(), CliError> {
    let sale = open(opts, profile).await?;
    repair_products(&sale, args).await
}

async fn repair_products(sale: &Opened, args: &RepairArgs) -> Result<(), CliError> {
    // The table both doors ask: a repair (its dry run too) needs `[repair] rewrite = "delta"`.
    sale::capability::over_adapter(&sale.sale, sale::Capability::Repair)?;
    let settings = &sale.settings;
    if !args.expect_drift.is_empty() && args.expect_drift.len() != args.products.len() {
        return Err(CliError::Refused(format!(
            "--expect-drift was given {} time(s) for {} product(s): give one per --product, in the same order",
            args.expect_drift.len(),
            args.products.len()
        )));
    }
    let confirmed = super::several::typed_again(settings.environment, args.dry_run, &args.products, &args.confirm)?;
    let links = sale.links();
    let mut done = Vec::new();
    let mut errors = Vec::new();
    for (n, product) in args.products.iter().enumerate() {
        let req = DeltaRequest {
            product: product.clone(),
            reason: args.reason.clone(),
            dry_run: args.dry_run,
            confirm: confirmed.contains(product).then(|| product.clone()),
            expect_drift: args.expect_drift.get(n).copied(),
        };
        match adapter::repair::repair(&sale.file, &links, sale.state.as_ref(), settings, &req).await {
            Ok(r) => done.push(r),
            Err(e) => errors.push((product.clone(), e)),
        }
    }
    if args.json {
        output::json(&done);
    } else {
        print_repairs(&done);
        if let Some(command) = apply_command(&done, settings.environment, &args.reason) {
            say!("to apply what you reviewed: {command}");
        }
    }
    super::several::failures(errors, args.products.len())
}

/// The command that applies exactly what a dry run showed: each product with its drift as
/// `--expect-drift` (and on production the id typed again). The profile and the adapter file
/// are as this run named them, by flag or environment: the person adds the flags they used.
fn apply_command(
    done: &[DeltaRepair],
    environment: stockguard_core::profile::EnvironmentKind,
    reason: &str,
) -> Option<String> {
    let planned: Vec<&DeltaRepair> = done.iter().filter(|r| r.dry_run).collect();
    if planned.is_empty() {
        return None;
    }
    let mut command = String::from("stockguard adapter repair");
    if planned.len() > 1 {
        command = String::from("stockguard rewrite");
    }
    for r in &planned {
        let id = shell_word(&r.product_id.to_string());
        command.push_str(&format!(" --product {id} --expect-drift {}", r.drift));
        if environment == stockguard_core::profile::EnvironmentKind::Production {
            command.push_str(&format!(" --confirm {id}"));
        }
    }
    let reason = if reason.trim().is_empty() { "<why>" } else { reason };
    command.push_str(&format!(" --reason {}", shell_word(reason)));
    Some(command)
}

/// `word` as one shell word: as it is when it holds only letters, digits and `-_.:/` (a
/// number, a SKU), else single-quoted (a text id may hold a space or a quote).
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:/".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

fn print_repairs(done: &[DeltaRepair]) {
    let opt = |v: Option<i64>| v.map_or("-".to_string(), |v| v.to_string());
    for r in done {
        if r.dry_run {
            say!(
                "dry run: product {} is {} by {}: would write {} over {} ({:+} to {}), leaving drift {}; nothing was \
                 written, no lock or fencing token taken",
                r.product_id,
                r.status_before,
                r.drift.abs(),
                opt(r.redis_after),
                opt(r.redis_before),
                r.delta,
                r.key,
                r.drift_after
            );
        } else {
            let counter = match (r.counter_after, r.increment != r.delta) {
                (Some(raw), true) => format!(" (the counter was below zero: {:+} to it, now {raw})", r.increment),
                _ => String::new(),
            };
            let moved = r.redis_after.unwrap_or(0) - r.redis_before.unwrap_or(0);
            if moved == 0 {
                say!(
                    "product {}: {:+} to {} changed nothing the sale reads: it reads {} as before, drift {} (audited)",
                    r.product_id,
                    r.increment,
                    r.key,
                    opt(r.redis_after),
                    r.drift_after
                );
            } else {
                say!(
                    "product {}: the sale reads {} in {} now, {} before ({moved:+}){counter}; drift now {} (read back, audited)",
                    r.product_id,
                    opt(r.redis_after),
                    r.key,
                    opt(r.redis_before),
                    r.drift_after
                );
            }
        }
    }
}

/// `adapter init`: the proposal, printed or written to a new file; what is undecided said on
/// standard error.
async fn init(
    profile: Option<&str>,
    opts: adapter::init::InitOptions,
    out: Option<PathBuf>,
    json: bool,
) -> Result<(), CliError> {
    if let Some(path) = out.as_ref().filter(|p| p.exists()) {
        return Err(CliError::Refused(format!(
            "{} exists: init writes a new file only (give another --out, or move that one away)",
            path.display()
        )));
    }
    let conns = connect(profile).await?;
    let proposal = adapter::init::propose(Some(&conns.mysql), Some(&conns.redis), &opts).await?;
    match &out {
        Some(path) => std::fs::write(path, &proposal.text)
            .map_err(|e| CliError::Refused(format!("cannot write {}: {e}", path.display())))?,
        None if !json => output::write_text(&proposal.text),
        None => {}
    }
    if json {
        output::json(&proposal);
        return Ok(());
    }
    eprintln!("adapter init: {} keys sampled; {} thing(s) to settle:", proposal.keys_sampled, proposal.undecided.len());
    for u in &proposal.undecided {
        eprintln!("  - {u}");
    }
    if let Some(path) = &out {
        eprintln!("written to {}; then: stockguard --adapter {} adapter check", path.display(), path.display());
    }
    Ok(())
}

fn print_lost(scan: &adapter::lost::LostScan) {
    if let Some(why) = &scan.unknowable_because {
        say!("lost orders cannot be known for this source: {why}");
        return;
    }
    for o in &scan.orders {
        say!("product {}  order {}  entry {}", o.product_id, o.order_id, o.entry_id);
    }
    let bounds = format!(
        "the newest {} delivered entries{} per stream",
        scan.limit,
        if scan.since == "-" { String::new() } else { format!(" since {}", scan.since) }
    );
    say!(
        "{} lost order(s): accepted, acknowledged, never a row; {} delivered entries read ({} acknowledged; {bounds})",
        scan.orders.len(),
        scan.scanned,
        scan.acknowledged
    );
    if scan.unjudged > 0 {
        say!("{} acknowledged entries name no order id or product: not judged", scan.unjudged);
    }
    if scan.reached_limit {
        say!("the limit was reached: older entries were not read (raise --limit, or give --since)");
    }
}

fn print_check(r: &CheckReport) {
    say!("sale {}: {} products", r.sale, r.products);
    if !r.statuses.is_empty() {
        say!("orders per status (as stored):");
        for s in &r.statuses {
            say!("  {:>12}  {:>8} orders  {}", s.status, s.orders, s.meaning);
        }
    }
    for k in &r.keys {
        say!("key {} -> {}: {}", k.template, k.key, k.value.as_deref().unwrap_or("(missing)"));
    }
    if let Some(n) = r.in_flight {
        say!("in flight now: {n}");
    }
    for w in &r.warnings {
        say!("warning: {w}");
    }
    for p in &r.problems {
        say!("problem: {p}");
    }
    if r.problems.is_empty() {
        say!("everything the adapter names exists");
    }
}

/// `stockguard recon` over an adapter.
pub async fn recon(opts: &AdapterOpts, profile: Option<&str>, only: &[ProductId], json: bool) -> Result<(), CliError> {
    let sale = open(opts, profile).await?;
    let baselines = sale.baselines().await?;
    let readings = adapter::read(&sale.file, &sale.links(), &baselines, only).await?;
    if json {
        output::json(&readings);
    } else {
        let plain: Vec<_> = readings.iter().map(|r: &AdapterReading| r.reading.clone()).collect();
        output::write_text(&output::readings_table(&plain));
        output::write_text(&output::unsettled_lines(&readings));
        if readings.iter().any(|r| r.lost.is_some()) {
            for r in &readings {
                if let Some(lost) = r.lost.as_ref().filter(|l| l.count > 0) {
                    let ids = lost.order_ids.join(", ");
                    say!(
                        "product {}: {} lost (accepted, acknowledged, never a row): {ids}",
                        r.reading.product_id,
                        lost.count
                    );
                }
            }
        } else if !readings.is_empty() {
            say!("lost orders: cannot be known for this source (`adapter lost` says why)");
        }
        if sale.file.needs_baseline() && baselines.is_empty() {
            say!("no baseline recorded: the ledger is not judged (`stockguard adapter baseline --reason ...`)");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn a_text_id_the_dry_run_prints_is_one_shell_word() {
        assert_eq!(shell_word("SKU-10"), "SKU-10");
        assert_eq!(shell_word("17"), "17");
        assert_eq!(shell_word("SKU A"), "'SKU A'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }
}
