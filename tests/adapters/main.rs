//! Sale adapters (issue 28): Stockguard pointed at flash sales it did not build.
//!
//! `sales/` holds small, real implementations of the public sale shapes the issue lists, each
//! with its own DDL, keys, queue, order path and consumer, on the real MariaDB, Redis and
//! RabbitMQ; `sales_selftest` shows each sells exactly its stock on its own, and that its
//! fault injectors leave the sale's own truth as they say; `sales_files` holds each sale's
//! adapter file to its twin in `docs/adapters/`. One test binary, each file a module.

#[path = "../support/mod.rs"]
mod support;

mod attach;
mod capabilities;
mod clamp_repair;
mod cli;
mod compensation;
mod compensation_recheck;
mod deep_stream;
mod file_lines;
mod held_messages;
mod init;
mod lost;
mod no_redis;
mod overview;
mod readings;
mod sales;
mod sales_files;
mod sales_selftest;
mod sampler;
mod state_db;
mod stream_fields;
mod string_ids;
mod switch;
mod unreadable_key;
