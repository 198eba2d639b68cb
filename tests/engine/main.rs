//! The sale engine: the order path, HTTP, close and cancel, modes, the DB path, consumer groups, order numbers, the load generator.
//!
//! One test binary per area, so that linking costs less on two cores; each file is a module.

#[path = "../support/in_process.rs"]
mod in_process;
#[path = "../support/sale.rs"]
mod sale;
#[path = "../support/mod.rs"]
mod support;

mod close;
mod consumer_groups;
mod db_path;
mod http;
mod load_sale;
mod modes;
mod order_no_clash;
mod path;
