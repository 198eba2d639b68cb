//! `stockguard drill report|compare|review`: after a run, its write-up, how it compares with
//! another, and the facilitator's notes.

use std::path::Path;

use super::super::output::{self, say};
use super::super::{connect, CliError};
use stockguard_core::drills::report::{self, Format};
use stockguard_core::drills::{self, compare};
use stockguard_core::lang::Lang;

pub(super) async fn report(
    profile: Option<&str>,
    run: u64,
    format: Format,
    lang: Lang,
    out: Option<&Path>,
) -> Result<(), CliError> {
    let conns = connect(profile).await?;
    let data = report::load(&conns.mysql, run).await?;
    let text = report::render(&data, format, lang);
    match out {
        Some(path) => {
            std::fs::write(path, text)
                .map_err(|source| CliError::Write { path: path.display().to_string(), source })?;
            eprintln!("report of run #{run} written to {}", path.display());
        }
        None => output::write_text(&text),
    }
    Ok(())
}

pub(super) async fn compare(profile: Option<&str>, a: u64, b: u64, threshold: f64, json: bool) -> Result<(), CliError> {
    let conns = connect(profile).await?;
    let a = drills::show(&conns.mysql, a, drills::STALE_AFTER).await?;
    let b = drills::show(&conns.mysql, b, drills::STALE_AFTER).await?;
    let comparison = compare::compare(&a, &b, threshold);
    if json {
        output::json(&comparison);
    } else {
        output::write_text(&comparison.table());
    }
    match comparison.regressions.is_empty() {
        true => Ok(()),
        false => Err(CliError::Regressed { figures: comparison.regressions.clone() }),
    }
}

pub(super) async fn review(profile: Option<&str>, run: u64, notes: &str) -> Result<(), CliError> {
    let conns = connect(profile).await?;
    let review = drills::set_review(&conns.mysql, &conns.settings, run, notes).await?;
    say!("review notes of run #{run} recorded by {} at {} (audited); they show in its report", review.by, review.at);
    Ok(())
}

/// `--threshold`: a relative worsening, 0 or more (0.2: 20% worse).
pub(super) fn threshold(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{text:?} is not a share of 0 or more (0.2 means 20% worse)")),
    }
}
