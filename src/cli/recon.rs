//! `stockguard recon` and `stockguard drift watch`.

use std::time::Duration;

use clap::{Args, Subcommand};

use super::adapter::AdapterOpts;
use super::output::say;
use super::{connect, output, CliError};
use stockguard_core::recon::drift::DriftTracker;
use stockguard_core::recon::ledger::{self, LedgerOptions};
use stockguard_core::recon::read_products;
use stockguard_core::sale::Capability;
use stockguard_core::ProductId;

#[derive(Debug, Args)]
pub struct ReconArgs {
    /// Only these products (repeatable); all when omitted.
    #[arg(long = "product")]
    products: Vec<ProductId>,
    /// Run the DB ledger check over every product instead (chunked, read-only, on the
    /// profile's replica when it has one).
    #[arg(long, conflicts_with = "products")]
    ledger: bool,
    /// Time limit for any one ledger statement, in milliseconds.
    #[arg(long, default_value_t = 5000)]
    statement_limit_ms: u64,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
pub enum DriftCommand {
    /// A live terminal table of every product's drift, most severe first.
    Watch {
        /// Seconds between readings.
        #[arg(long, default_value_t = 1.0)]
        interval: f64,
        /// Stop after this many readings (default: until Ctrl-C).
        #[arg(long)]
        count: Option<u64>,
    },
}

pub async fn recon(args: ReconArgs, profile: Option<&str>, adapter: &AdapterOpts) -> Result<(), CliError> {
    if adapter.file.is_some() {
        if args.ledger {
            super::refused_over_adapter(adapter, Capability::LedgerCheck)?;
        }
        return super::adapter::recon(adapter, profile, &args.products, args.json).await;
    }
    let conns = connect(profile).await?;
    if args.ledger {
        let replica = stockguard_core::connect::connect_replica(&conns.settings).await?;
        let opts = LedgerOptions {
            statement_limit: Duration::from_millis(args.statement_limit_ms),
            ..LedgerOptions::default()
        };
        let report = ledger::reconcile(
            replica.as_ref().unwrap_or(&conns.mysql),
            &opts,
            replica.is_some(),
            &mut |done, total| {
                eprint!("\rledger check: {done}/{total} products");
            },
        )
        .await?;
        eprintln!();
        if args.json {
            output::json(&report);
        } else {
            say!(
                "{} products in {} chunks, {:.0} ms (slowest statement {:.0} ms){}",
                report.products_checked,
                report.chunks,
                report.total_ms,
                report.slowest_statement_ms,
                report.replica_lag_secs.map_or(String::new(), |l| format!(", on the replica ({l} s behind)"))
            );
            for m in &report.mismatches {
                say!(
                    "  product {}: initial {} != stock {} + live {} (gap {}){}",
                    m.product_id,
                    m.initial_stock,
                    m.db_stock,
                    m.live_orders_qty,
                    m.gap,
                    if m.oversold { " OVERSOLD" } else { "" }
                );
            }
            if report.mismatches.is_empty() {
                say!("  the DB ledger holds for every product");
            }
        }
        return Ok(());
    }
    let mut redis = conns.redis.clone();
    let readings =
        read_products(&conns.mysql, &mut redis, &conns.keys, &super::several::of_our_sale(&args.products)?).await?;
    if args.json {
        output::json(&readings);
    } else {
        output::write_text(&output::readings_table(&readings));
    }
    Ok(())
}

/// `drift watch`, on our own sale or, with an adapter file, on the sale it describes (a drift
/// there is confirmed only when two settled readings agree on it).
pub async fn drift(cmd: DriftCommand, profile: Option<&str>, adapter: &AdapterOpts) -> Result<(), CliError> {
    let DriftCommand::Watch { interval, count } = cmd;
    if !(interval.is_finite() && interval >= 0.1) {
        return Err(CliError::Refused(format!("--interval must be at least 0.1 s, got {interval}")));
    }
    let sale = match adapter.file {
        Some(_) => Some(super::adapter::open(adapter, profile).await?),
        None => None,
    };
    // Our own sale's connections; over an adapter, the sale opened (its own links) is enough.
    let conns = match &sale {
        Some(_) => None,
        None => Some(connect(profile).await?),
    };
    let settings = match (&sale, &conns) {
        (Some(sale), _) => sale.settings.clone(),
        (None, Some(conns)) => conns.settings.clone(),
        (None, None) => unreachable!("connected above"),
    };
    let baselines = match &sale {
        Some(sale) => sale.baselines().await?,
        None => Default::default(),
    };
    let mut redis = conns.as_ref().map(|c| c.redis.clone());
    let mut ticker = tokio::time::interval(Duration::from_secs_f64(interval));
    let mut tracker = DriftTracker::default();
    let mut n = 0u64;
    // One listener for the whole watch, waited on during the reading too: a Ctrl-C pressed
    // while a reading runs (seconds, on a large sale) is kept, not lost between two listeners
    // (once tokio handles SIGINT, a signal with no listener is dropped).
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = &mut interrupted => return Ok(()),
        }
        let started = std::time::Instant::now();
        let read = async {
            Ok::<_, CliError>(match &sale {
                Some(sale) => {
                    let read = stockguard_core::adapter::read(&sale.file, &sale.links(), &baselines, &[]).await?;
                    let notes = output::unsettled_lines(&read);
                    (read.into_iter().map(|r| r.reading).collect(), notes)
                }
                None => {
                    let (conns, redis) = (conns.as_ref().expect("our own sale"), redis.as_mut().expect("our own sale"));
                    (read_products(&conns.mysql, redis, &conns.keys, &[]).await?, String::new())
                }
            })
        };
        let (readings, unsettled): (Vec<_>, String) = tokio::select! {
            readings = read => readings?,
            _ = &mut interrupted => return Ok(()),
        };
        let took = started.elapsed();
        // An unsettled product (over an adapter) is never a drift verdict.
        let confirmed: Vec<_> = tracker
            .observe(&readings)
            .into_iter()
            .filter(|c| readings.iter().any(|r| r.product_id == c.product_id && r.settled))
            .collect();
        // Clear the screen and home the cursor, then redraw.
        output::write_text("\x1b[2J\x1b[H");
        say!(
            "stockguard drift watch · {} · {} · {}  (Ctrl-C to stop)\n",
            settings.environment,
            if settings.has_mysql() { settings.mysql_display() } else { settings.redis_display() },
            chrono::Local::now().format("%H:%M:%S")
        );
        output::write_text(&output::readings_table(&readings));
        output::write_text(&unsettled);
        say!(
            "\nreading took {:.1} ms · confirmed drift (two agreeing readings): {}",
            took.as_secs_f64() * 1000.0,
            if confirmed.is_empty() {
                "none".to_string()
            } else {
                confirmed.iter().map(|c| format!("{} {}", c.product_id, c.status)).collect::<Vec<_>>().join(", ")
            }
        );
        n += 1;
        if count.is_some_and(|c| n >= c) {
            return Ok(());
        }
    }
}
