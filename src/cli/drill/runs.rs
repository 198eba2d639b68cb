//! `stockguard drill status|halt`: where the sale's runs stand, and stopping them.

use super::super::output::{self, say};
use super::super::{connect, CliError};
use stockguard_core::drills;

pub(super) async fn status(profile: Option<&str>, limit: u32, json: bool) -> Result<(), CliError> {
    let conns = connect(profile).await?;
    drills::clear_leftovers(&conns).await;
    let runs = drills::list(&conns.mysql, limit, drills::STALE_AFTER).await?;
    if json {
        output::json(&runs);
        return Ok(());
    }
    if runs.is_empty() {
        say!("no drill has run on this sale");
    }
    for run in runs {
        let state = if run.dead { "DEAD (runner stopped without finishing)" } else { run.status.as_str() };
        let halt = run.halt_reason.map(|r| format!("; halt requested: {r}")).unwrap_or_default();
        say!("#{} {} {} started {} by {}{}", run.id, run.scenario, state, run.started_at, run.started_by, halt);
    }
    Ok(())
}

pub(super) async fn halt(profile: Option<&str>, reason: &str) -> Result<(), CliError> {
    let conns = connect(profile).await?;
    let asked = drills::request_halt(&conns.mysql, &conns.settings, reason).await?;
    if asked.is_empty() {
        say!("no drill is running; nothing to halt (recorded in the audit log)");
    } else {
        say!("halt requested for runs {asked:?}: each stops and restores its faults on its next heartbeat");
    }
    Ok(())
}
