//! The proposal written as an adapter file, each guess commented with where it came from and
//! each thing a person must settle marked `UNDECIDED` (and added to the list beside it).

use std::fmt::Write as _;

use super::keys::{KeysGuess, StockForm};
use super::schema::SchemaGuess;
use super::StreamGuess;

/// What the proposal is made of.
pub struct Parts<'a> {
    pub name: &'a str,
    pub schema: &'a SchemaGuess,
    pub statuses: &'a [(String, i64)],
    pub keys: &'a KeysGuess,
    pub stream: Option<&'a StreamGuess>,
}

/// A TOML string.
fn s(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// A status value as the sale stores it: a number when it is one.
fn status(v: &str) -> String {
    match v.parse::<i64>() {
        Ok(i) => i.to_string(),
        Err(_) => s(v),
    }
}

/// Writes the file; what it cannot decide goes to `undecided` too.
pub fn file(p: &Parts<'_>, undecided: &mut Vec<String>) -> String {
    let mut out = String::new();
    let mut mark = |out: &mut String, what: String| {
        let _ = writeln!(out, "# UNDECIDED: {what}");
        undecided.push(what);
    };
    let _ = writeln!(
        out,
        "# Proposed by `stockguard adapter init`: read it, settle every UNDECIDED line, then run\n\
         # `stockguard --adapter <this file> adapter check`. The format: docs/adapters/README.md.\n"
    );
    let _ = writeln!(out, "[sale]\nname = {}", s(p.name));
    if p.schema.stock.is_none() && !p.keys.ids.is_empty() {
        let ids: Vec<String> = p.keys.ids.iter().map(u64::to_string).collect();
        let _ = writeln!(out, "products = [{}]                 # the products the Redis keys name", ids.join(", "));
    }
    if let Some(st) = &p.schema.stock {
        let _ = writeln!(
            out,
            "\n[stock]\ntable = {}\nproduct = {}\nremaining = {}",
            s(&st.table),
            s(&st.product),
            s(&st.remaining)
        );
        if let Some(r) = &st.reserved {
            let _ = writeln!(out, "reserved = {}                   # units held by unpaid orders", s(r));
        }
        match &st.initial {
            Some(c) => {
                let _ = writeln!(out, "initial = {}", s(&format!("column:{c}")));
            }
            None => {
                let _ = writeln!(
                    out,
                    "initial = \"baseline\"               # no initial stock stored: `stockguard adapter baseline --reason ...`"
                );
            }
        }
        if let Some(n) = &st.name {
            let _ = writeln!(out, "name = {}", s(n));
        }
    }
    if let Some(o) = &p.schema.orders {
        let _ = writeln!(out, "\n[orders]\ntable = {}\nproduct = {}", s(&o.table), s(&o.product));
        match &o.quantity_column {
            Some(q) => {
                let _ = writeln!(out, "quantity_column = {}", s(q));
            }
            None => {
                let _ = writeln!(
                    out,
                    "quantity = 1                         # no quantity column found: one unit per order"
                );
            }
        }
        let _ = writeln!(out, "status = {}", s(&o.status));
        let found: Vec<String> = p.statuses.iter().map(|(v, n)| format!("{v} ({n} orders)")).collect();
        let list: Vec<String> = p.statuses.iter().map(|(v, _)| status(v)).collect();
        if found.is_empty() {
            mark(&mut out, "which statuses hold a unit: no orders yet to count; list them in `live`".into());
        } else {
            mark(
                &mut out,
                format!(
                    "which statuses hold a unit (live) and which gave it back (released)? found: {}; \
                     every one is proposed live: move the cancelled ones to released (labels can lie: count, do not trust names)",
                    found.join(", ")
                ),
            );
        }
        let _ = writeln!(out, "live = [{}]\nreleased = []", list.join(", "));
        if p.schema.stock.as_ref().is_some_and(|st| st.reserved.is_some()) {
            mark(
                &mut out,
                "which live statuses hold their units in `reserved` (unpaid)? list them in `reserving`".into(),
            );
        }
        let _ = writeln!(out, "reserving = []");
        for (field, value) in [("order_id", &o.order_id), ("created", &o.created), ("user", &o.user)] {
            if let Some(v) = value {
                let _ = writeln!(out, "{field} = {}", s(v));
            }
        }
        if let Some((table, on, key)) = &o.join {
            let _ = writeln!(
                out,
                "join = {{ table = {}, on = {}, key = {} }}   # status, created and user are the parent order's",
                s(table),
                s(on),
                s(key)
            );
        }
    }
    if let Some(form) = &p.keys.stock {
        let _ = writeln!(out, "\n[redis]");
        match form {
            StockForm::Counter { template, negative_seen } => {
                let _ = writeln!(out, "stock = {}", s(template));
                if *negative_seen {
                    let _ = writeln!(
                        out,
                        "negative = \"clamp\"                 # a counter below zero was seen: rejected tries, not drift"
                    );
                }
            }
            StockForm::Hash { key, total, sold } => {
                let _ = writeln!(out, "stock_hash = {{ key = {}, total = {}, sold = {} }}", s(key), s(total), s(sold));
            }
            StockForm::Buckets { key, count } => {
                mark(
                    &mut out,
                    "a per-bucket table, if the sale keeps one: add table, product, bucket and available to buckets"
                        .into(),
                );
                let _ = writeln!(out, "buckets = {{ key = {}, count = {} }}", s(key), s(count));
            }
        }
        if let Some(b) = &p.keys.buyers {
            let _ = writeln!(out, "buyers = {}                # a set per product, read for information", s(b));
        }
    }
    let _ = writeln!(out, "\n[inflight]");
    match p.stream {
        Some(st) => {
            let _ = writeln!(out, "source = \"redis_stream\"\nstream = {}", s(&st.stream));
            match &st.group {
                Some(g) => {
                    let _ = writeln!(out, "group = {}", s(g));
                }
                None => {
                    mark(
                        &mut out,
                        format!("the stream {} has no consumer group: name the one its consumer will use", st.stream),
                    );
                    let _ = writeln!(out, "group = \"\"");
                }
            }
            match &st.product_field {
                Some(f) => {
                    let _ = writeln!(out, "product_field = {}", s(f));
                }
                None => {
                    mark(
                        &mut out,
                        format!(
                            "which field of {}'s entries names the product (no entry to read, or none says)",
                            st.stream
                        ),
                    );
                    let _ = writeln!(out, "product_field = \"\"");
                }
            }
            if let Some(f) = &st.order_id_field {
                let _ =
                    writeln!(out, "order_id_field = {}               # entries carry the order id: attributable", s(f));
            }
        }
        None => {
            mark(
                &mut out,
                "no Redis stream found: if accepted orders wait in a queue (RabbitMQ: docs/adapters/fastapi_rabbit.toml), \
                 say so here; \"none\" means orders are rows before the buyer's answer"
                    .into(),
            );
            let _ = writeln!(out, "source = \"none\"");
        }
    }
    let _ = writeln!(
        out,
        "\n[repair]\nrewrite = \"off\"                       # read only; \"delta\" lets `adapter repair` apply a settled drift"
    );
    out
}
