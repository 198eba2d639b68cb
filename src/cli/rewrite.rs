//! `stockguard rewrite`: the locked, fenced rewrite of Redis stock; over an adapter, the
//! adapter's delta repair with the same flags and rules.

use clap::Args;

use super::adapter::AdapterOpts;
use super::output::say;
use super::several::{failures, of_our_sale, typed_again};
use super::{connect, output, CliError};
use stockguard_core::rewrite::{rewrite_many, Outcome, RewriteRequest, RewriteResult};
use stockguard_core::ProductId;

#[derive(Debug, Args)]
pub struct RewriteArgs {
    /// Product to rewrite (repeatable for a batch).
    #[arg(long = "product", required = true)]
    products: Vec<ProductId>,
    /// Why: goes to the audit log.
    #[arg(long)]
    reason: String,
    /// Show the delta, change nothing.
    #[arg(long)]
    dry_run: bool,
    /// The product id typed again (required on production; repeatable).
    #[arg(long = "confirm")]
    confirm: Vec<ProductId>,
    /// Over an adapter: the settled drift you reviewed, one per --product in the same order
    /// (the dry run prints them); the repair runs only while the drift is still that.
    /// Required on production.
    #[arg(long = "expect-drift", allow_hyphen_values = true)]
    expect_drift: Vec<i64>,
    #[arg(long)]
    json: bool,
}

fn print(results: &[RewriteResult]) {
    say!(
        "{:>8}  {:<14} {:>8} {:>8} {:>7} {:>7} {:>7} {:>7}",
        "product",
        "outcome",
        "before",
        "after",
        "delta",
        "drift",
        "fence",
        "audit"
    );
    let opt = |v: Option<i64>| v.map_or("-".to_string(), |v| v.to_string());
    for r in results {
        say!(
            "{:>8}  {:<14} {:>8} {:>8} {:>7} {:>7} {:>7} {:>7}",
            r.product_id,
            r.outcome.as_str(),
            opt(r.before),
            opt(r.after),
            r.delta,
            opt(r.drift_after),
            r.fence_token,
            r.audit_id
        );
    }
    for r in results.iter().filter(|r| r.outcome == Outcome::DryRun) {
        let would = match (r.before, r.after) {
            (before, after) if before == after => "write nothing (Redis already agrees with the DB)".to_string(),
            (Some(before), Some(after)) => format!("write {after} over {before} ({:+})", r.delta),
            (None, Some(after)) => format!("rebuild the missing key at {after}"),
            _ => "write nothing".to_string(),
        };
        say!(
            "dry run: product {} would {would}, leaving drift {}; nothing was written, no lock or fencing token taken",
            r.product_id,
            opt(r.drift_after)
        );
    }
}

pub async fn run(args: RewriteArgs, profile: Option<&str>, adapter: &AdapterOpts) -> Result<(), CliError> {
    if adapter.file.is_some() {
        return super::adapter::rewrite(
            adapter,
            profile,
            &super::adapter::RepairArgs {
                products: args.products,
                reason: args.reason,
                dry_run: args.dry_run,
                confirm: args.confirm,
                expect_drift: args.expect_drift,
                json: args.json,
            },
        )
        .await;
    }
    if !args.expect_drift.is_empty() {
        return Err(CliError::Refused(
            "--expect-drift is for a sale read through its adapter file: our own sale's rewrite sets Redis from the \
             exact reading under its fence"
                .into(),
        ));
    }
    let (products, given) = (of_our_sale(&args.products)?, of_our_sale(&args.confirm)?);
    let conns = connect(profile).await?;
    let confirmed = typed_again(conns.settings.environment, args.dry_run, &products, &given)?;
    let template = RewriteRequest { dry_run: args.dry_run, ..RewriteRequest::new(0, &args.reason) };
    let mut results = Vec::new();
    let mut errors = Vec::new();
    for (p, r) in products.iter().zip(rewrite_many(&conns, &products, &template, &confirmed).await) {
        match r {
            Ok(r) => results.push(r),
            Err(e) => errors.push((*p, e)),
        }
    }
    if args.json {
        output::json(&results);
    } else if !results.is_empty() {
        print(&results);
    }
    failures(errors, args.products.len())
}
