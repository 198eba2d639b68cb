//! `stockguard alerts` (what fires now, with its acknowledgements; acknowledgements whose
//! alert cleared are closed) and `stockguard alerts ack KEY --reason ...`; over an adapter,
//! the same with the acknowledgements in the state database.

use std::time::Duration;

use clap::{Args, Subcommand};

use super::adapter::AdapterOpts;
use super::output::say;
use super::{connect, output, CliError};
use stockguard_core::alerts::{self, acks, AlertState, Thresholds};

#[derive(Debug, Args)]
pub struct AlertsArgs {
    #[command(subcommand)]
    command: Option<AlertsCommand>,
    /// Reservations waiting to be persisted above which the backlog alerts (default: the
    /// profile's threshold).
    #[arg(long, global = true)]
    backlog_threshold: Option<i64>,
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum AlertsCommand {
    /// Acknowledge a firing alert (its key, as `stockguard alerts` lists it).
    Ack {
        key: String,
        /// Why (required; it goes to the audit log).
        #[arg(long)]
        reason: String,
        /// For how long (e.g. `30m`); by default until the alert clears.
        #[arg(long = "for", value_parser = humantime::parse_duration)]
        for_: Option<Duration>,
    },
}

/// The two readings that confirm a drift are this far apart.
const CONFIRM_AFTER: Duration = Duration::from_secs(1);

pub async fn run(args: AlertsArgs, profile: Option<&str>, adapter: &AdapterOpts) -> Result<(), CliError> {
    if adapter.file.is_some() {
        return over_adapter(args, profile, adapter).await;
    }
    let conns = connect(profile).await?;
    let thresholds = Thresholds {
        backlog_messages: args.backlog_threshold.unwrap_or(conns.settings.thresholds.backlog_messages),
        ..conns.settings.thresholds
    };
    let firing = alerts::now::firing(&conns, &thresholds, CONFIRM_AFTER).await?;
    // Our own reading is exact and the one-off reads twice: an alert that does not fire is gone.
    answer(args, acks::Desk::ours(&conns), &firing, &[]).await
}

/// Acknowledges one alert, or lists what fires with its acknowledgements (closing those whose
/// alert cleared), at `desk`: our own sale's database or an adapter sale's state database.
async fn answer(
    args: AlertsArgs,
    desk: acks::Desk<'_>,
    firing: &[alerts::Alert],
    readings: &[stockguard_core::recon::Reading],
) -> Result<(), CliError> {
    match args.command {
        Some(AlertsCommand::Ack { key, reason, for_ }) => {
            let until = match for_ {
                Some(d) => Some(
                    chrono::Utc::now().naive_utc()
                        + chrono::Duration::from_std(d).map_err(|e| CliError::Refused(format!("--for: {e}")))?,
                ),
                None => None,
            };
            let ack = acks::acknowledge_at(desk, firing, &key, &reason, until).await?;
            if args.json {
                output::json(&ack);
            } else {
                say!("acknowledged {} by {} (#{})", ack.alert_key, ack.acked_by, ack.id);
            }
        }
        None => {
            for (ack, why) in acks::settle_at(desk, firing, readings).await? {
                eprintln!("acknowledgement of {} by {} closed: {why}", ack.alert_key, ack.acked_by);
            }
            let onsets = alerts::Onsets::once(firing, chrono::Utc::now());
            print_states(&acks::states_at(desk, firing, &onsets).await?, args.json);
        }
    }
    Ok(())
}

fn print_states(states: &[AlertState], json: bool) {
    if json {
        output::json(&states);
    } else if states.is_empty() {
        say!("no alert is firing");
    } else {
        for s in states {
            let taken = s.acknowledged.as_ref().map_or("not acknowledged".to_string(), |a| {
                format!("acknowledged by {} at {}: {}", a.acked_by, a.acked_at, a.reason)
            });
            say!(
                "{:<24} {:<16} {:>8}  {taken}",
                s.alert.key,
                s.alert.kind.as_str(),
                s.alert.value.map_or("-".into(), |v| v.to_string())
            );
        }
    }
}

/// What fires on a sale read through its adapter file, with its acknowledgements, kept in
/// the state database under the adapter sale's name (the same core path as our own sale's).
async fn over_adapter(args: AlertsArgs, profile: Option<&str>, opts: &AdapterOpts) -> Result<(), CliError> {
    let sale = super::adapter::open(opts, profile).await?;
    let baselines = sale.baselines().await?;
    let thresholds = sale.settings.thresholds;
    let (firing, readings) =
        stockguard_core::adapter::alerts::firing(&sale.file, &sale.links(), &baselines, &thresholds).await?;
    // Without the state database nothing can be acknowledged, and nothing is known taken.
    let Some(state) = sale.state.as_ref() else {
        if args.command.is_some() {
            return Err(stockguard_core::adapter::AdapterError::NoStateDb.into());
        }
        let states: Vec<AlertState> = alerts::Onsets::once(&firing, chrono::Utc::now()).unacknowledged(&firing);
        print_states(&states, args.json);
        return Ok(());
    };
    let desk = acks::Desk::adapter(state, &sale.settings, &sale.file.sale.name);
    answer(args, desk, &firing, &readings).await
}
