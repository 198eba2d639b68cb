//! Fault drills as the console sees them: what a drill is ([`plan`]: the `drills/*.toml`
//! files), where a run stands ([`runs`]: heartbeat, halt, verdict), what happened during it
//! ([`events`]: the timeline) and what it came to ([`summary`]). [`leftovers`] clears what an
//! ended or dead run left (its rig's switch row, its engines' heartbeats, a dead run's keys).
//!
//! After a run: [`report`] writes it up (HTML with charts, Markdown, JSON; Chinese or
//! English) with its review (trigger, chain of impact, recovery, follow-ups); [`review`]
//! keeps the facilitator's notes on it (audited); [`compare`] sets two runs side by side and
//! flags what got worse. [`variant`] is what a run changed from its file, in either language.
//!
//! The runner itself (rig, load, faults, sampler) is the engine crate's `drill::runner`: the
//! console only reads and halts runs, through the database, and never talks to a runner.
//! A console that does not link it starts one as a process of the `stockguard` binary
//! ([`launch`]) and then watches the run through the database like any other.

pub mod compare;
pub mod events;
pub mod launch;
pub mod leftovers;
pub mod plan;
pub mod report;
pub mod review;
pub mod runs;
pub mod summary;
pub mod variant;

pub use leftovers::{clear_leftovers, forget_heartbeats, lead_back_rows_of, sweep, Swept};
pub use review::{review_of, set_review, Review};
pub use runs::*;
