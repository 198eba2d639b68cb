//! The kinds of moment a drill's story tells (the chain of impact, the recovery): a leaf that
//! the story and the words that name its moments both read.

use serde::Serialize;

/// What a moment of the run was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MomentKind {
    FirstDbPath,
    AllOnDbPath,
    WorstErrorSecond,
    PeakDrift,
    PeakBacklog,
    FirstViolation,
    Abort,
    Halt,
    Repair,
    FaultRestored,
    BackOnRedis,
    DriftSettled,
}
