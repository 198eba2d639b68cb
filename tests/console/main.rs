//! The console core: exact readings, the ledger, the fenced rewrite, the degrade switch and its guided exit, drill runs, charts, profiles, the schema.
//!
//! One test binary per area, so that linking costs less on two cores; each file is a module.

#[path = "../support/in_process.rs"]
mod in_process;
#[path = "../support/sale.rs"]
mod sale;
#[path = "../support/mod.rs"]
mod support;

mod adapter_acks;
mod alerts;
mod chart;
mod compensation;
mod degrade;
mod drill_report;
mod drill_runs;
mod exit_batch;
mod exit_guard;
mod four_eyes;
mod four_eyes_loose;
mod four_eyes_rig_and_notes;
mod four_eyes_since_approval;
mod ledger;
mod overview;
mod profile_manage;
mod recon_exact;
mod recon_inject;
mod rewrite;
mod rig_apart;
mod rig_leftovers;
mod rig_product_rows;
mod roles;
mod schema;
mod ssh_tunnel;
mod tls;
