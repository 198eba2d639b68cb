//! The CSV finance and customer service work from: one row per line.

use super::Case;

/// The case's lines as CSV, with a header row. Amounts in cents, as stored.
pub fn csv(case: &Case) -> Result<String, csv::Error> {
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record([
        "case_id",
        "product_id",
        "order_no",
        "user_id",
        "qty",
        "accepted_at",
        "price_cents",
        "reason",
        "action",
        "amount_cents",
        "outcome",
        "outcome_detail",
        "executed_by",
        "note",
        "read_by",
    ])?;
    for l in &case.lines {
        out.write_record([
            case.id.to_string(),
            case.product_id.to_string(),
            l.order_no.clone(),
            l.user_id.to_string(),
            l.qty.to_string(),
            l.accepted_at.clone(),
            l.price_cents.to_string(),
            l.reason.as_str().to_string(),
            l.action.map(|a| a.as_str()).unwrap_or("").to_string(),
            l.amount_cents.to_string(),
            l.outcome.as_str().to_string(),
            l.outcome_detail.clone(),
            l.executed_by.clone().unwrap_or_default(),
            l.note.clone(),
            l.read_by.clone().unwrap_or_default(),
        ])?;
    }
    let bytes = out.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Where the console saves a case's CSV when no path is given: the documents folder.
pub fn default_path(case_id: u64, now: chrono::DateTime<chrono::Utc>) -> std::path::PathBuf {
    let dir = dirs::document_dir().or_else(dirs::home_dir).unwrap_or_else(|| ".".into());
    dir.join(format!("stockguard-compensation-{case_id}-{}.csv", now.format("%Y%m%d-%H%M%S")))
}
