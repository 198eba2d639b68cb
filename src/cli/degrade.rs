//! `stockguard degrade status|on|off`: the degrade switch and the fleet's acknowledgements.
//! Over an adapter file, the sale's own flag where its `[switch]` section says it is.

use std::io::IsTerminal as _;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::adapter::AdapterOpts;
use super::output::say;
use super::{connect, output, CliError};
use stockguard_core::adapter::switch as sale_switch;
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::sale::{capability, Capability};
use stockguard_core::switch::exit::DEFAULT_STALE_AFTER;
use stockguard_core::switch::{self, Acknowledgement, ExitOptions, ExitStep, Scope};

#[derive(Debug, Subcommand)]
pub enum DegradeCommand {
    /// The switch per scope, and which live engine instances applied the newest revision.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Send orders straight to the DB; waits for every live instance to apply it.
    On(ToggleArgs),
    /// The guided exit back to Redis: pause, drain, rebuild Redis from the DB under the
    /// fence, resume, verify.
    Off(ToggleArgs),
}

#[derive(Debug, Args)]
pub struct ToggleArgs {
    /// One product only (default: the whole sale).
    #[arg(long)]
    product: Option<u64>,
    /// Why: goes to the audit log.
    #[arg(long)]
    reason: String,
    /// On production, `off` needs the scope typed again: `global` or `product:<id>`.
    #[arg(long)]
    confirm: Option<String>,
    /// Seconds to wait for the instances' acknowledgements.
    #[arg(long, default_value_t = 5)]
    wait: u64,
    #[arg(long)]
    json: bool,
}

fn ack_line(ack: &Acknowledgement) -> String {
    let time = ack.propagation_ms.map_or(String::new(), |ms| format!(" in {ms} ms"));
    format!("revision {}: applied by {} of {} live instances{time}", ack.revision, ack.applied, ack.live)
}

fn print_ack(ack: &Acknowledgement) {
    say!("{}", ack_line(ack));
    say!(
        "  {:<20} {:<22} {:>6} {:>9} {:<9} {:<9} {:>10}",
        "instance",
        "listen",
        "live",
        "revision",
        "mode",
        "breaker",
        "took"
    );
    for i in &ack.instances {
        let live = if i.live { "yes".to_string() } else { format!("stale {}s", i.heartbeat_age_ms / 1000) };
        let took = i.propagation_ms.map_or("-".to_string(), |ms| format!("{ms} ms"));
        say!(
            "  {:<20} {:<22} {:>6} {:>9} {:<9} {:<9} {:>10}",
            i.instance_id,
            i.listen_addr,
            live,
            i.applied_revision,
            i.effective_mode,
            i.breaker_state,
            took
        );
    }
}

pub async fn run(cmd: DegradeCommand, profile: Option<&str>, adapter: &AdapterOpts) -> Result<(), CliError> {
    if adapter.file.is_some() {
        return over_adapter(cmd, profile, adapter).await;
    }
    let conns = connect(profile).await?;
    match cmd {
        DegradeCommand::Status { json } => {
            // A dead drill's rig row lapses here rather than being shown as if it ruled.
            stockguard_core::drills::clear_leftovers(&conns).await;
            let status = switch::status(&conns, DEFAULT_STALE_AFTER).await?;
            if json {
                output::json(&status);
                return Ok(());
            }
            if status.scopes.is_empty() {
                say!("the switch was never set: every product is NORMAL");
            }
            for s in &status.scopes {
                say!(
                    "{:<16} {:<9} revision {:<6} by {} at {}: {}",
                    s.scope,
                    s.mode,
                    s.revision,
                    s.changed_by,
                    s.changed_at,
                    s.reason
                );
            }
            print_ack(&status.ack);
            Ok(())
        }
        DegradeCommand::On(args) => {
            let scope = args.product.map_or(Scope::Global, Scope::Product);
            let wait = Duration::from_secs(args.wait);
            let quiet = args.json;
            let toggled = switch::enter_db_mode(&conns, scope, &args.reason, wait, DEFAULT_STALE_AFTER, &|ack| {
                if !quiet {
                    eprint!("\r{}   ", ack_line(ack));
                }
            })
            .await?;
            if args.json {
                output::json(&toggled);
            } else {
                eprintln!();
                say!("{} is DEGRADED (revision {}, audit {})", scope, toggled.change.revision, toggled.change.audit_id);
                print_ack(&toggled.ack);
            }
            if !toggled.ack.complete && toggled.ack.live > 0 {
                return Err(CliError::Refused(format!(
                    "not every live instance applied revision {} within {}s",
                    toggled.change.revision, args.wait
                )));
            }
            Ok(())
        }
        DegradeCommand::Off(args) => {
            let scope = args.product.map_or(Scope::Global, Scope::Product);
            let mut opts = ExitOptions::new(scope, &args.reason);
            opts.ack_timeout = Duration::from_secs(args.wait);
            opts.confirm = args.confirm.clone();
            if conns.settings.environment == EnvironmentKind::Production
                && opts.confirm.is_none()
                && std::io::stdin().is_terminal()
            {
                eprint!("PRODUCTION: type the scope {} to rebuild Redis and leave DB mode: ", scope.key());
                let mut line = String::new();
                std::io::stdin().read_line(&mut line).map_err(CliError::Stdin)?;
                opts.confirm = Some(line.trim().to_string());
            }
            let quiet = args.json;
            let report = switch::guided_exit(&conns, &opts, &|step| {
                if !quiet {
                    eprintln!("{}", describe(step));
                }
            })
            .await?;
            if args.json {
                output::json(&report);
            } else {
                say!(
                    "{} is NORMAL again (revision {}); sales paused {} ms; audit {}",
                    scope,
                    report.normal_revision,
                    report.paused_ms,
                    report.audit_id
                );
                print_ack(&report.resume);
                if !report.not_back_on_redis.is_empty() {
                    say!(
                        "not back on Redis yet, holding sales (breaker not yet healthy): {:?}",
                        report.not_back_on_redis
                    );
                }
            }
            Ok(())
        }
    }
}

/// The sale's own flag through its adapter file: read, or written and read back.
async fn over_adapter(cmd: DegradeCommand, profile: Option<&str>, opts: &AdapterOpts) -> Result<(), CliError> {
    let sale = super::adapter::open(opts, profile).await?;
    // The table both doors ask: the sale's own flag needs a `[switch]` section.
    capability::over_adapter(&sale.sale, Capability::Degrade)?;
    let links = sale.links();
    let (on, args) = match cmd {
        DegradeCommand::Status { json } => {
            let flag = sale_switch::read(&sale.file, &links).await?;
            if json {
                output::json(&flag);
            } else {
                say!("{}", flag_line(&flag));
            }
            return Ok(());
        }
        DegradeCommand::On(args) => (true, args),
        DegradeCommand::Off(args) => (false, args),
    };
    if let Some(p) = args.product {
        return Err(CliError::Refused(format!(
            "the sale's [switch] flag is one for the whole sale: drop --product {p}"
        )));
    }
    let mut confirm = args.confirm.clone();
    if sale.settings.environment == EnvironmentKind::Production
        && confirm.is_none()
        && std::io::stdin().is_terminal()
        && sale.file.switch.is_some()
    {
        eprint!("PRODUCTION: type the scope {} to switch the sale's own degrade flag: ", sale_switch::SCOPE);
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map_err(CliError::Stdin)?;
        confirm = Some(line.trim().to_string());
    }
    let change =
        sale_switch::set(&sale.file, &links, sale.state.as_ref(), &sale.settings, on, &args.reason, confirm.as_deref())
            .await?;
    if args.json {
        output::json(&change);
    } else {
        say!("{} (was {}; audit {})", flag_line(&change.after), change.before.mode, change.audit_id);
    }
    Ok(())
}

fn flag_line(flag: &sale_switch::FlagState) -> String {
    let value = flag.value.as_deref().map_or("no value".to_string(), |v| format!("reads {v:?}"));
    format!("the sale's degrade flag ({} {}) is {}: {value}", flag.source.replace('_', " "), flag.location, flag.mode)
}

fn describe(step: &ExitStep) -> String {
    match step {
        ExitStep::Checked { products, live_instances } => {
            format!("1/6 checked: Redis answers; {products} products; {live_instances} live instances")
        }
        ExitStep::Paused { revision, ack } => format!("2/6 paused (revision {revision}): {}", ack_line(ack)),
        ExitStep::Drained { inflight_left } => format!("3/6 in-flight reservations persisted ({inflight_left} left)"),
        ExitStep::Rebuilt { product_id, buyers, outcome, delta } => {
            format!("4/6 product {product_id}: {buyers} buyers rebuilt, stock {} (delta {delta})", outcome.as_str())
        }
        ExitStep::Resumed { revision, ack } => format!("5/6 NORMAL (revision {revision}): {}", ack_line(ack)),
        ExitStep::Verified { products, drifting } => {
            format!(
                "6/6 verified {products} products; drifting: {}",
                if drifting.is_empty() { "none".into() } else { format!("{drifting:?}") }
            )
        }
    }
}
