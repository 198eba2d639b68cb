//! Fault drills run end to end against the real servers: each built-in drill in its short
//! form with three engines under load, the ledger abort, a halt from another process, a
//! runner killed with SIGKILL, and two runs of one file sending one schedule.
//!
//! Drills start engine processes and load them hard; two at once on two cores would measure
//! each other. [`one_at_a_time`] serialises them within this binary.

#[path = "../support/sale.rs"]
mod sale;
#[path = "../support/mod.rs"]
mod support;

mod abort;
mod beside_a_sale;
mod builtin;
mod halt;
mod proves_something;
mod report_in_chinese;
mod rerun;
mod rig;
mod rig_ids_and_rows;
