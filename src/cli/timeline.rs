//! `stockguard timeline [--since 2h | --from T --to T] [--product P] [--json | --format md
//! --out FILE [--lang zh]]`: what happened to the sale, oldest first, from the records it
//! keeps (our own sale's database, or the state database of a sale over its adapter).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use super::adapter::AdapterOpts;
use super::choice::one_of;
use super::output::say;
use super::{open_sale, output, CliError};
use stockguard_core::lang::Lang;
use stockguard_core::sale::Capability;
use stockguard_core::timeline::{self, markdown, Query, Span, Timeline};
use stockguard_core::ProductId;

#[derive(Debug, Args)]
pub struct TimelineArgs {
    /// How far back from now (`10m`, `2h`, `1d`); the default when no --from is given: 2h.
    #[arg(long, value_parser = humantime::parse_duration, conflicts_with_all = ["from", "to"])]
    since: Option<Duration>,
    /// The window's start, in UTC (`2026-12-07T20:00:00Z`, `2026-12-07 20:00`).
    #[arg(long, value_parser = time, requires = "to")]
    from: Option<chrono::NaiveDateTime>,
    /// The window's end (exclusive), in UTC.
    #[arg(long, value_parser = time, requires = "from")]
    to: Option<chrono::NaiveDateTime>,
    /// Only this product's events (and those of the whole sale, such as a global switch change).
    #[arg(long)]
    product: Option<ProductId>,
    /// At most this many events: the newest of the window (at most 10,000).
    #[arg(long, default_value_t = 500)]
    limit: u32,
    /// Machine output (the events, oldest first, with the window).
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// `md`: a Markdown page (a short summary and the table of events) for a ticket.
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Write the page to this file instead of standard output.
    #[arg(long, requires = "format")]
    out: Option<PathBuf>,
    #[arg(long, value_parser = one_of(&Lang::ALL, Lang::as_str), default_value = "en")]
    lang: Lang,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Md,
}

fn time(text: &str) -> Result<chrono::NaiveDateTime, String> {
    timeline::parse_time(text).ok_or_else(|| format!("{text:?} is not a time (say 2026-12-07T20:00:00Z)"))
}

pub async fn run(args: TimelineArgs, profile: Option<&str>, adapter: &AdapterOpts) -> Result<(), CliError> {
    let sale = open_sale(profile, adapter, adapter.file.as_deref()).await?;
    sale.require(Capability::Audit)?;
    let span = match (args.from, args.to) {
        (Some(from), Some(to)) => Span::Between { from, to },
        _ => Span::Since(args.since.unwrap_or(Duration::from_secs(2 * 3600))),
    };
    let query = Query { span, product: args.product, limit: args.limit };
    let read = timeline::read(&sale, &query).await?;
    if args.json {
        output::json(&read);
    } else if let Some(Format::Md) = args.format {
        let page = markdown::render(&read, args.lang);
        match &args.out {
            Some(path) => std::fs::write(path, page)
                .map_err(|source| CliError::Write { path: path.display().to_string(), source })?,
            None => output::write_text(&page),
        }
    } else {
        table(&read);
    }
    Ok(())
}

fn table(t: &Timeline) {
    say!(
        "{:<23}  {:<20} {:>8}  {:<12} {:<14} {:<44} {:<22} reason",
        "at",
        "kind",
        "product",
        "actor",
        "outcome",
        "detail",
        "record"
    );
    for e in &t.events {
        say!(
            "{:<23}  {:<20} {:>8}  {:<12} {:<14} {:<44} {:<22} {}",
            e.at.format("%Y-%m-%d %H:%M:%S%.3f").to_string(),
            e.kind.as_str(),
            e.product_id.as_ref().map_or_else(|| "-".to_string(), ToString::to_string),
            e.actor,
            e.outcome,
            e.detail,
            e.record.to_string(),
            e.reason
        );
    }
    if t.events.is_empty() {
        say!("nothing happened between {} and {}", t.from, t.to);
    }
    if t.truncated {
        say!(
            "(older events of the window left out: at most {} listed; narrow the window or raise --limit)",
            t.events.len()
        );
    }
}
