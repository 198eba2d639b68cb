//! Fault drills as the console sees them: what a drill is ([`plan`]: the `drills/*.toml`
//! files), where a run stands ([`runs`]: heartbeat, halt, verdict), what happened during it
//! ([`events`]: the timeline) and what it came to ([`summary`]).
//!
//! The runner itself (rig, load, faults, sampler) is the engine crate's `drill::runner`: the
//! console only reads and halts runs, through the database, and never talks to a runner.

pub mod events;
pub mod plan;
pub mod runs;
pub mod summary;

pub use runs::*;
