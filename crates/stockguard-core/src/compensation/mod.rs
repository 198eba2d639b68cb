//! Oversell compensation: a case per product incident, a plan per affected order, four eyes on
//! the plan, and an execution that has one effect per line however often it runs.
//!
//! - [`open`]: a case from the ledger: the orders beyond stock (the last accepted ones: the
//!   first accepted are those stock can honour), and accepted orders withdrawn
//!   (`order_failures`). Idempotent: one case per product that is not closed.
//! - [`on_tick`]: the step every reading loop calls: a confirmed oversell opens its case,
//!   once per incident, with or without a window.
//! - [`plan`]: what each line gets: fulfil (the merchant adds the units to the sale), cancel
//!   and refund, a coupon, or a note.
//! - [`workflow`]: propose, approve, reject, close. Each is a step row that the database
//!   checks itself (triggers in `migrations/20261201000017_compensation_workflow.sql` and
//!   `20261202000022_compensation_from_the_ledger.sql`): the maker never approves their own
//!   plan, a planner neither approves nor executes, an approver never executes, above the
//!   threshold two distinct checkers are needed, a draft that owes buyers is not closed by one
//!   person, whoever connects, through this code or raw SQL. Who took a step is the server's
//!   word (`USER()`), not the client's, and every step writes its audit row.
//! - [`execute`]: one transaction per line, whose effect row is the execution: its trigger
//!   rechecks the ledger, performs the effect and writes the line's outcome and the event, so
//!   retries, two executors and a crash give one effect per line, and no account can record an
//!   effect that did not happen or write an event itself. `docs/contract.md` ("Who may do
//!   what") lists what the database enforces for each role, and what it cannot.
//! - [`over_adapter`]: the same cases on a sale Stockguard did not build, in the state
//!   database: opened from the sale's own orders beyond stock (last accepted first out, by the
//!   adapter's `created`, then `order_id`), executed by a declared cancel in the sale's
//!   database or handed over in the export; [`sale_side`]: that sale as a case holds it, and
//!   what executing a line does in it.
//! - [`read`]: list and show; [`export`]: CSV for finance and customer service.
//! - [`types`]: the case, its lines and steps as the CLI and the console show them.

pub mod execute;
pub mod export;
pub mod on_tick;
pub mod open;
pub mod over_adapter;
pub mod plan;
pub mod read;
pub mod sale_side;
pub mod types;
pub mod workflow;

pub use types::{Action, Case, CaseStatus, Line, LineOutcome, LineReason, Step};

/// What can go wrong with a case.
#[derive(Debug, thiserror::Error)]
pub enum CompensationError {
    #[error("no compensation case {0}")]
    NoSuchCase(u64),
    #[error("product {0} has nothing to compensate: no unit beyond stock and no withdrawn order")]
    NothingToCompensate(crate::product_id::ProductId),
    #[error("no product {0} in this sale")]
    NoSuchProduct(u64),
    /// The plan does not fit the case (an order not in it, an action a line cannot take).
    #[error("{0}")]
    BadPlan(String),
    /// The workflow's rules said no: the database's own words (its triggers), or the same rule
    /// checked first here for a clearer answer.
    #[error("refused: {0}")]
    Refused(String),
    #[error(transparent)]
    Db(#[from] crate::step::StepFailed),
    /// The sale read over its adapter (its orders, or a declared cancel) failed.
    #[error(transparent)]
    Sale(#[from] crate::adapter::AdapterError),
}

impl CompensationError {
    /// A trigger's `SIGNAL SQLSTATE '45000'` becomes [`Self::Refused`] with its message; any
    /// other failure names its step.
    pub(crate) fn from_db(step: &'static str) -> impl FnOnce(sqlx::Error) -> Self {
        move |e| {
            if let Some(db) = e.as_database_error() {
                if db.code().as_deref() == Some("45000") {
                    return Self::Refused(db.message().trim_start_matches("compensation: ").to_string());
                }
            }
            Self::Db(crate::step::StepFailed { step, source: e })
        }
    }
}

/// The connected account's name, as the server knows it (the user part of `USER()`): the
/// name the triggers record for every step and effect.
pub async fn whoami(pool: &sqlx::MySqlPool) -> Result<String, sqlx::Error> {
    sqlx::query_scalar("SELECT SUBSTRING_INDEX(USER(), '@', 1)").fetch_one(pool).await
}
