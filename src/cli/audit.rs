//! `stockguard audit [--action A] [--outcome O] [--text T] [--limit N] [--json]`: the audit log
//! of the sale, newest first, as the window's audit screen shows it: our own sale's database,
//! or the state database of a sale over its adapter.

use clap::Args;

use super::adapter::AdapterOpts;
use super::output::say;
use super::{open_sale, output, CliError};
use stockguard_core::audit::{self, AuditFilter};
use stockguard_core::sale::Capability;

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Only this action (say `rewrite` or `compensation.approve`).
    #[arg(long)]
    action: Option<String>,
    /// Only this outcome (say `APPLIED`).
    #[arg(long)]
    outcome: Option<String>,
    /// Only entries whose target, actor or reason contains this.
    #[arg(long)]
    text: Option<String>,
    /// At most this many entries (at most 1,000).
    #[arg(long, default_value_t = 50)]
    limit: u32,
    #[arg(long)]
    json: bool,
}

pub async fn run(args: AuditArgs, profile: Option<&str>, adapter: &AdapterOpts) -> Result<(), CliError> {
    let sale = open_sale(profile, adapter, adapter.file.as_deref()).await?;
    sale.require(Capability::Audit)?;
    let filter = AuditFilter { action: args.action, outcome: args.outcome, text: args.text, limit: Some(args.limit) };
    let records = audit::query(sale.records()?, &filter).await?;
    if args.json {
        output::json(&records);
        return Ok(());
    }
    for r in &records {
        let why = if r.reason.is_empty() { String::new() } else { format!(": {}", r.reason) };
        say!("{:>6} {} {:<16} {:<24} {:<16} {}{why}", r.id, r.at, r.actor, r.action, r.target, r.outcome);
    }
    if records.is_empty() {
        say!("no audit entry matches");
    }
    Ok(())
}
