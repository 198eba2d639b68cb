//! `stockguard compensation list|open|show|plan|propose|approve|reject|execute|close|export`:
//! oversell compensation with four eyes. Every step is taken as the profile's MySQL account;
//! the database decides whether that account may take it (see `stockguard_core::compensation`).
//! With an adapter file the cases are the state database's (`--state-url`, each person's own
//! account there): `open` reads the sale's orders beyond stock, `execute` performs a declared
//! cancel in the sale's database or hands the lines over in the export; every other step is
//! the same (`stockguard_core::compensation::over_adapter`).

use clap::{Args, Subcommand};

use super::adapter::AdapterOpts;
use super::output::say;
use super::{open_sale, output, CliError};
use stockguard_core::compensation::execute::LineRun;
use stockguard_core::compensation::plan::{set_plan, Choice, Lines};
use stockguard_core::compensation::workflow::{take, StepKind, Stepped};
use stockguard_core::compensation::{export, read, Action, Case, CaseStatus, LineReason};
use stockguard_core::sale::Capability;
use stockguard_core::ProductId;

#[derive(Debug, Subcommand)]
pub enum CompensationCommand {
    /// The inbox: cases by status, with their totals and age.
    List {
        /// Only cases in this status (DRAFT, PROPOSED, APPROVED, EXECUTING, EXECUTED, CLOSED).
        #[arg(long)]
        status: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Open the product's case from the ledger (or return its open one).
    Open {
        /// The product, as the sale keys it (a number, or over an adapter text such as SKU-A).
        #[arg(long)]
        product: ProductId,
        #[arg(long)]
        json: bool,
    },
    /// One case: its orders, plan, totals and approval timeline.
    Show {
        case: u64,
        #[arg(long)]
        json: bool,
    },
    /// Set what each line gets (the case must be a draft).
    Plan(PlanArgs),
    /// Set the plan (if given) and propose it for approval: you are its maker.
    Propose(PlanArgs),
    /// Approve a proposal you did not make.
    Approve(StepArgs),
    /// Reject a proposal you did not make; it goes back to its maker as a draft.
    Reject(StepArgs),
    /// Carry out an approved plan, one effect per line however often it runs. You must be
    /// neither its maker nor one of its checkers.
    Execute {
        case: u64,
        /// The case id typed again: execution cancels orders and writes refunds.
        #[arg(long)]
        confirm: Option<u64>,
        #[arg(long)]
        json: bool,
    },
    /// Close an executed case (or drop a draft).
    Close(StepArgs),
    /// The case's lines as CSV, for finance and customer service.
    Export {
        case: u64,
        /// Write to this file instead of standard output.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    case: u64,
    /// What every oversold line gets: fulfil, cancel-refund, coupon or note.
    #[arg(long)]
    oversold: Option<String>,
    /// What every withdrawn line gets: coupon or note.
    #[arg(long)]
    withdrawn: Option<String>,
    /// One order's action, overriding the above: ORDER_NO=ACTION (repeatable).
    #[arg(long = "order", value_name = "ORDER_NO=ACTION")]
    orders: Vec<String>,
    /// The coupon's amount, in cents.
    #[arg(long)]
    coupon_cents: Option<i64>,
    /// A note on the lines set here (and, for propose, the proposal's reason).
    #[arg(long, default_value = "")]
    note: String,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct StepArgs {
    case: u64,
    /// Why: recorded with the step.
    #[arg(long, default_value = "")]
    reason: String,
    #[arg(long)]
    json: bool,
}

fn action(text: &str) -> Result<Action, CliError> {
    match text.to_ascii_lowercase().replace('_', "-").as_str() {
        "fulfil" | "fulfill" => Ok(Action::Fulfil),
        "cancel-refund" => Ok(Action::CancelRefund),
        "coupon" => Ok(Action::Coupon),
        "note" => Ok(Action::Note),
        other => Err(CliError::Refused(format!("unknown action {other:?}: fulfil, cancel-refund, coupon or note"))),
    }
}

fn choices(args: &PlanArgs) -> Result<Vec<Choice>, CliError> {
    let choice = |lines, action| Choice { lines, action, amount_cents: args.coupon_cents, note: args.note.clone() };
    let mut out = Vec::new();
    if let Some(a) = &args.oversold {
        out.push(choice(Lines::Reason(LineReason::Oversold), action(a)?));
    }
    if let Some(a) = &args.withdrawn {
        out.push(choice(Lines::Reason(LineReason::Withdrawn), action(a)?));
    }
    for o in &args.orders {
        let (order_no, a) =
            o.split_once('=').ok_or_else(|| CliError::Refused(format!("--order {o:?}: expected ORDER_NO=ACTION")))?;
        out.push(choice(Lines::Order(order_no.to_string()), action(a)?));
    }
    Ok(out)
}

fn cents(c: i64) -> String {
    format!("{}{}.{:02}", if c < 0 { "-" } else { "" }, c.abs() / 100, c.abs() % 100)
}

fn print_case(case: &Case) {
    say!(
        "case {} · product {} · {} · {} oversold, {} withdrawn · total {}",
        case.id,
        case.product_id,
        case.status,
        case.oversold_units,
        case.withdrawn_units,
        cents(case.total_cents)
    );
    say!(
        "opened by {} at {}; maker {}; approvals {}/{} ({})",
        case.opened_by,
        case.opened_at,
        case.maker.as_deref().unwrap_or("-"),
        case.approvals.len(),
        case.approvals_needed,
        case.approvals.join(", ")
    );
    if case.approvals_needed >= 2 && case.maker.is_some() {
        match case.two_checkers_above_cents {
            Some(above) => say!(
                "two checkers: the plan's total {} is above {} (compensation_settings)",
                cents(case.total_cents),
                cents(above)
            ),
            None => say!("two checkers: the settings row is missing, so every proposal needs two"),
        }
    }
    if let Some(initial) = case.initial_stock {
        if case.lines.iter().any(|l| l.sold_from.is_some()) {
            say!("why these orders: each oversold line is among the last units sold beyond the {initial} on sale (#: its first unit, in acceptance order)");
        }
    }
    say!(
        "  {:<24} {:>10} {:>4} {:<23} {:>9} {:<15} {:<13} {:>10} {:<8}",
        "order",
        "buyer",
        "qty",
        "accepted at",
        "price",
        "reason",
        "action",
        "amount",
        "outcome"
    );
    for l in &case.lines {
        let reason = match l.sold_from {
            Some(unit) => format!("{} #{unit}", l.reason),
            None => l.reason.to_string(),
        };
        say!(
            "  {:<24} {:>10} {:>4} {:<23} {:>9} {:<15} {:<13} {:>10} {:<8}",
            l.order_no,
            l.user_id,
            l.qty,
            l.accepted_at,
            cents(l.price_cents),
            reason,
            l.action.map_or("-", |a| a.as_str()),
            cents(l.amount_cents),
            l.outcome
        );
    }
    for l in case.lines.iter().filter(|l| l.read_by.is_some()) {
        say!(
            "  order {} was recorded from the sale by {}, not by the case's opener: ask them",
            l.order_no,
            l.read_by.as_deref().unwrap_or_default()
        );
    }
    for (a, n, total) in case.totals_by_action() {
        say!("  {a}: {n} lines, {}", cents(total));
    }
    say!("timeline:");
    for s in &case.steps {
        let why = if s.reason.is_empty() { String::new() } else { format!(": {}", s.reason) };
        say!("  {} {:<8} by {}{why}", s.at, s.step, s.actor);
    }
}

fn print_stepped(s: &Stepped, json: bool) {
    if json {
        output::json(s);
    } else {
        say!("case {}: {} (as {}; approvals {}/{})", s.case_id, s.status, s.actor, s.approvals, s.approvals_needed);
    }
}

pub async fn run(cmd: CompensationCommand, profile: Option<&str>, adapter: &AdapterOpts) -> Result<(), CliError> {
    // The cases of our own sale, or of a sale over its adapter (in its state database).
    let sale = open_sale(profile, adapter, adapter.file.as_deref()).await?;
    sale.require(Capability::Compensation)?;
    let pool = sale.records()?;
    match cmd {
        CompensationCommand::List { status, json } => {
            let status = match status {
                Some(s) => Some(CaseStatus::parse(&s.to_ascii_uppercase()).ok_or_else(|| {
                    CliError::Refused(format!(
                        "unknown status {s:?}: DRAFT, PROPOSED, APPROVED, EXECUTING, EXECUTED, CLOSED"
                    ))
                })?),
                None => None,
            };
            let cases = read::list(pool, status).await?;
            if json {
                output::json(&cases);
                return Ok(());
            }
            say!(
                "{:>5} {:>10} {:<10} {:>6} {:>12} {:>8} {:<16}",
                "case",
                "product",
                "status",
                "lines",
                "total",
                "age",
                "maker"
            );
            for c in cases {
                say!(
                    "{:>5} {:>10} {:<10} {:>6} {:>12} {:>7}m {:<16}",
                    c.id,
                    c.product_id,
                    c.status,
                    c.lines,
                    cents(c.total_cents),
                    c.age_s / 60,
                    c.maker.as_deref().unwrap_or("-")
                );
            }
        }
        CompensationCommand::Open { product, json } => {
            let opened = sale.open_case(&product).await?;
            if json {
                output::json(&opened);
            } else if opened.created {
                say!("opened case {} with {} lines", opened.case_id, opened.lines_added);
            } else {
                say!("case {} was already open; {} lines added", opened.case_id, opened.lines_added);
                if opened.waiting > 0 {
                    say!("{} newly affected orders wait: the case is past its draft", opened.waiting);
                }
            }
        }
        CompensationCommand::Show { case, json } => {
            let case = read::show(pool, case).await?;
            if json {
                output::json(&case);
            } else {
                print_case(&case);
            }
        }
        CompensationCommand::Plan(args) => {
            let planned = set_plan(pool, args.case, &choices(&args)?).await?;
            if args.json {
                output::json(&planned);
            } else {
                say!("{} lines planned; total {}", planned.lines_changed, cents(planned.total_cents));
            }
        }
        CompensationCommand::Propose(args) => {
            let choices = choices(&args)?;
            if !choices.is_empty() {
                set_plan(pool, args.case, &choices).await?;
            }
            print_stepped(&take(pool, args.case, StepKind::Propose, &args.note).await?, args.json);
        }
        CompensationCommand::Approve(a) => {
            print_stepped(&take(pool, a.case, StepKind::Approve, &a.reason).await?, a.json)
        }
        CompensationCommand::Reject(a) => {
            print_stepped(&take(pool, a.case, StepKind::Reject, &a.reason).await?, a.json)
        }
        CompensationCommand::Close(a) => print_stepped(&take(pool, a.case, StepKind::Close, &a.reason).await?, a.json),
        CompensationCommand::Execute { case, confirm, json } => {
            if confirm != Some(case) {
                return Err(CliError::Refused(format!(
                    "execution cancels orders and writes refunds: type the case id again with --confirm {case}"
                )));
            }
            let progress = |done: usize, total: usize, order_no: &str| {
                if !json {
                    say!("  [{done}/{total}] {order_no}");
                }
            };
            let ran = sale.execute_case(case, &progress).await?;
            if json {
                output::json(&ran);
                return Ok(());
            }
            let count = |f: fn(&LineRun) -> bool| ran.lines.iter().filter(|l| f(l)).count();
            say!(
                "{} done, {} skipped, {} already done by another run, {} unknown",
                count(|l| matches!(l, LineRun::Done { .. })),
                count(|l| matches!(l, LineRun::Skipped { .. })),
                count(|l| matches!(l, LineRun::AlreadyDone { .. })),
                count(|l| matches!(l, LineRun::Unknown { .. }))
            );
            print_stepped(&ran.after, false);
            if ran.lines.iter().any(|l| matches!(l, LineRun::Unknown { .. })) {
                return Err(CliError::Refused(format!(
                    "some lines' outcome is unknown (a commit's answer was lost): run `stockguard compensation execute {case} --confirm {case}` again to settle them"
                )));
            }
        }
        CompensationCommand::Export { case, out } => {
            let text = export::csv(&read::show(pool, case).await?)
                .map_err(|e| CliError::Refused(format!("cannot write the CSV: {e}")))?;
            match out {
                Some(path) => std::fs::write(&path, text)
                    .map_err(|source| CliError::Write { path: path.display().to_string(), source })?,
                None => output::write_text(&text),
            }
        }
    }
    Ok(())
}
