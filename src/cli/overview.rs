//! `stockguard overview [--json] [--product ID] [--png FILE]`: the sale at a glance, as the
//! desktop app's first screen shows it (`stockguard_core::overview`).

use std::time::Duration;

use clap::Args;
use serde::Serialize;

use super::adapter::AdapterOpts;
use super::{open_sale, output, CliError};
use stockguard_core::alerts::Thresholds;
use stockguard_core::overview::{self, burndown, chart, BurnDown, EngineAnswer, Overview};
use stockguard_core::sale::{Capability, Sale};

#[derive(Debug, Args)]
pub struct OverviewArgs {
    /// The burn-down of this product instead of the whole sale's.
    #[arg(long)]
    product: Option<u64>,
    /// Also draw the burn-down into this PNG file.
    #[arg(long)]
    png: Option<std::path::PathBuf>,
    /// Reservations waiting to be persisted above which the backlog alerts (default: the
    /// profile's threshold).
    #[arg(long)]
    backlog_threshold: Option<i64>,
    #[arg(long)]
    json: bool,
}

/// Two scrapes and two readings this far apart: the window of the rates, and the second
/// reading that confirms a drift.
const WINDOW: Duration = Duration::from_secs(1);

#[derive(Serialize)]
struct Out<'a> {
    #[serde(flatten)]
    overview: &'a Overview,
    burndown: &'a BurnDown,
}

pub async fn run(args: OverviewArgs, profile: Option<&str>, adapter: &AdapterOpts) -> Result<(), CliError> {
    let sale = open_sale(profile, adapter, adapter.file.as_deref()).await?;
    let Sale::Ours(ours) = &sale else {
        return over_adapter(&sale, &args).await;
    };
    let conns = &ours.conns;
    let thresholds = Thresholds {
        backlog_messages: args.backlog_threshold.unwrap_or(conns.settings.thresholds.backlog_messages),
        ..conns.settings.thresholds
    };
    let o = overview::once(conns, thresholds, WINDOW).await?;
    let burn = burndown::read(&conns.mysql, args.product).await?;
    if let Some(path) = &args.png {
        let name = args.product.map_or("whole sale".to_string(), |p| format!("product {p}"));
        chart::burndown_png(&burn, &chart::default_labels(), &name, (1200, 600), path)
            .map_err(overview::OverviewError::from)?;
        eprintln!("burn-down saved to {}", path.display());
    }
    if args.json {
        output::json(&Out { overview: &o, burndown: &burn });
    } else {
        output::write_text(&text(&o, &burn));
    }
    Ok(())
}

/// The overview of a sale read over its adapter: what its reading and its state database
/// show (no engine of ours answers a scrape); the burn-down reads our own orders table.
async fn over_adapter(sale: &Sale, args: &OverviewArgs) -> Result<(), CliError> {
    if args.product.is_some() || args.png.is_some() {
        sale.require(Capability::Burndown)?;
    }
    let opened = sale.adapter().expect("a sale over an adapter");
    let o = overview::over_adapter::once(opened, sale.settings()).await?;
    if args.json {
        output::json(&o);
    } else {
        let mut text = head(&o);
        let r = &o.orders;
        text.push_str(&format!(
            "orders {} rows, {} orders/s (over the adapter of the sale {:?}: no engine of ours reports answers, \
             p99 or backlog here)\n",
            r.accepted,
            opt(r.orders_per_s, ""),
            sale.name()
        ));
        text.push_str(&tail(&o));
        output::write_text(&text);
    }
    Ok(())
}

fn opt(v: Option<f64>, unit: &str) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}{unit}"))
}

fn text(o: &Overview, burn: &BurnDown) -> String {
    let r = &o.orders;
    let mut out = head(o);
    out.push_str(&format!(
        "orders {} (accepted {}, sold out {}, errors {}, refused {}); {} orders/s, {} accepted/s\n\
         p99 {} (since start {}), backlog {}, in flight {}\n",
        r.requests,
        r.accepted,
        r.sold_out,
        r.errors,
        r.refused,
        opt(r.orders_per_s, ""),
        opt(r.accepted_per_s, ""),
        opt(r.p99_ms, " ms"),
        opt(r.p99_total_ms, " ms"),
        r.backlog.map_or("-".into(), |b| b.to_string()),
        r.inflight_units.map_or("-".into(), |b| b.to_string()),
    ));
    for e in &o.engines {
        let state = match e.answer {
            EngineAnswer::Answered => {
                format!("{} requests, {} orders/s", e.requests.unwrap_or(0), opt(e.orders_per_s, ""))
            }
            EngineAnswer::NotAnswering => format!("NOT ANSWERING: {}", e.error.as_deref().unwrap_or("?")),
            EngineAnswer::Stale => format!("stale (last heartbeat {} s ago)", e.heartbeat_age_ms / 1000),
        };
        out.push_str(&format!(
            "engine {} at {} (breaker {}): {state}\n",
            e.instance_id, e.listen_addr, e.breaker_state
        ));
    }
    if o.engines.is_empty() {
        out.push_str("no engine has reported a heartbeat\n");
    }
    out.push_str(&tail(o));
    let what = burn.product_id.map_or("the sale".to_string(), |p| format!("product {p}"));
    out.push_str(&format!(
        "burn-down of {what}: {} of {} units left, {} points of {} s\n",
        burn.remaining(),
        burn.initial_units,
        burn.points.len(),
        burn.bucket_secs
    ));
    out
}

/// The verdict and the units, on either kind of sale.
fn head(o: &Overview) -> String {
    let s = &o.sale;
    format!(
        "{}\nsold {} of {} units ({:.1}%), {} left, {} products; mode {}{}\n",
        o.verdict,
        s.sold_units,
        s.initial_units,
        s.sold_pct,
        s.remaining_units,
        s.products,
        o.mode,
        if o.products_off_normal > 0 {
            format!(" (+{} products off NORMAL)", o.products_off_normal)
        } else {
            String::new()
        },
    )
}

/// The alerts and the open compensation cases, on either kind of sale.
fn tail(o: &Overview) -> String {
    let mut out = String::new();
    for s in &o.alerts {
        let taken = s
            .acknowledged
            .as_ref()
            .map_or("not acknowledged".to_string(), |a| format!("acknowledged by {}", a.acked_by));
        let value = s.alert.value.map_or("-".into(), |v| v.to_string());
        out.push_str(&format!("alert {} ({value}): {taken}\n", s.alert.key));
    }
    for c in &o.compensation_open {
        out.push_str(&format!("compensation case {} of product {}: {}\n", c.id, c.product_id, c.status));
    }
    out
}
