//! Errors that name their step and keep their cause.
//!
//! A database statement that fails is said as the step it was taking ("inserting the rewrite
//! run"), with the server's own words kept as its source, never flattened into "DB: ...":
//! `query.execute(&mut *tx).await.step("inserting the rewrite run")?`. Each layer's error
//! holds a [`StepFailed`] (`Db(#[from] StepFailed)`, transparent), and the doors print the
//! whole chain with [`chain`]: the CLI as its one line, the desktop as the message's `detail`.
//!
//! A leaf: every room may use it, it uses none of them.

use std::error::Error;

/// A statement that failed, named by the step it was taking.
#[derive(Debug, thiserror::Error)]
#[error("the database failed while {step}")]
pub struct StepFailed {
    pub step: &'static str,
    #[source]
    pub source: sqlx::Error,
}

/// A Redis command (or pipeline) that failed, named by the step it was taking; the server's
/// own words (`NOPERM`, `LOADING`, a dropped connection) kept as its source.
#[derive(Debug, thiserror::Error)]
#[error("Redis failed while {step}")]
pub struct RedisStepFailed {
    pub step: &'static str,
    #[source]
    pub source: redis::RedisError,
}

/// Names the step of a database or Redis result: `.step("deducting the batch's stock")?`.
pub trait Step<T> {
    /// The failure with its step: [`StepFailed`] for the database, [`RedisStepFailed`] for Redis.
    type Failed;
    fn step(self, step: &'static str) -> Result<T, Self::Failed>;
}

impl<T> Step<T> for Result<T, sqlx::Error> {
    type Failed = StepFailed;
    fn step(self, step: &'static str) -> Result<T, StepFailed> {
        self.map_err(|source| StepFailed { step, source })
    }
}

impl<T> Step<T> for Result<T, redis::RedisError> {
    type Failed = RedisStepFailed;
    fn step(self, step: &'static str) -> Result<T, RedisStepFailed> {
        self.map_err(|source| RedisStepFailed { step, source })
    }
}

/// Whether the server refused a statement as a duplicate key (sqlx's own classification, the
/// one test every idempotent writer uses).
pub fn is_unique_violation(err: &sqlx::Error) -> bool {
    err.as_database_error().is_some_and(|e| e.is_unique_violation())
}

/// Whether InnoDB chose the statement as a deadlock's victim (SQLSTATE 40001, error 1213): the
/// server rolled back the statement's transaction whole.
pub fn is_deadlock(err: &sqlx::Error) -> bool {
    err.as_database_error().and_then(|d| d.code()).as_deref() == Some("40001")
}

/// Sends a statement (or a whole transaction) again when InnoDB chose it as a deadlock's
/// victim: the server rolled it back whole, so sending it again is safe. Writers that lock the
/// same rows through triggers in different orders (two chunks of one guided exit on
/// `rewrite_runs`' gap locks, two executors of one compensation case) meet this under a loaded
/// machine; a handful of tries with a short, growing pause settle it.
pub async fn again_on_deadlock<T, F, Fut>(mut statement: F) -> Result<T, sqlx::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, sqlx::Error>>,
{
    const TRIES: u32 = 5;
    let mut tried = 1;
    loop {
        match statement().await {
            Err(e) if tried < TRIES && is_deadlock(&e) => {
                tracing::debug!(tried, "deadlock victim; sending the statement again");
                tokio::time::sleep(std::time::Duration::from_millis(10 << tried)).await;
                tried += 1;
            }
            done => return done,
        }
    }
}

/// An error and its causes in one line, outermost first ("the exit failed: the database
/// failed while ...: Lock wait timeout exceeded"). A cause whose words the line already holds
/// (an error that prints its source itself) is not said twice.
pub fn chain(error: &(dyn Error + 'static)) -> String {
    let mut line = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        let said = e.to_string();
        if !line.contains(&said) {
            line.push_str(": ");
            line.push_str(&said);
        }
        cause = e.source();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    enum Layer {
        #[error("the rewrite of product 7 failed")]
        Failed(#[source] StepFailed),
    }

    #[test]
    fn a_failed_step_is_said_with_its_cause_once() {
        let failed: Result<(), _> = Err(sqlx::Error::PoolTimedOut);
        let layer = Layer::Failed(failed.step("taking the product's lock row").unwrap_err());
        assert_eq!(
            chain(&layer),
            format!(
                "the rewrite of product 7 failed: the database failed while taking the product's lock row: {}",
                sqlx::Error::PoolTimedOut
            )
        );
    }
}
