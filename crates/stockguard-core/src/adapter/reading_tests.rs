//! The rule of [`super::judge`]: a drift is a verdict only when everything that may be in flight
//! is seen and attributed.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::*;
use crate::adapter::inflight::{Beyond, Waiting};

const FILE: &str = r#"
    [sale]
    name = "t"
    [stock]
    table = "goods"
    product = "id"
    remaining = "stock"
    initial = 100
    [orders]
    table = "orders"
    product = "goods_id"
    quantity = 1
    status = "status"
    live = [1]
    order_id = "id"
    [redis]
    stock = "s:${id}"
    [inflight]
    source = "redis_stream"
    stream = "orders"
    group = "g"
    product_field = "goods_id"
    order_id_field = "order_id"
"#;

fn file() -> AdapterFile {
    AdapterFile::parse(FILE, Path::new("t.toml")).expect("the test file parses")
}

/// A pass that saw Redis at `redis`, the DB with `remaining` left and `live` orders, and `inflight`.
fn pass(redis: i64, remaining: i64, live: i64, inflight: InflightRead) -> Pass {
    Pass {
        redis: HashMap::from([(1.into(), RedisStock { units: Some(redis), ..Default::default() })]),
        inflight,
        db: HashMap::from([(1.into(), DbRow { remaining, live, rows: live, ..Default::default() })]),
        in_db: HashSet::new(),
        buckets: HashMap::new(),
    }
}

fn held(held: Held) -> InflightRead {
    InflightRead { held, ..Default::default() }
}

fn verdict(first: &Pass, second: &Pass) -> (DriftStatus, Option<i64>, Option<Unsettled>) {
    let r = judge(&file(), &1.into(), first, second, None, true);
    (r.reading.status, r.reading.drift, r.unsettled)
}

#[test]
fn messages_a_consumer_holds_make_the_product_unsettled_never_redis_low() {
    // Redis took 3 units; the consumer holds their messages, stuck behind a row lock.
    let p = || pass(97, 100, 0, held(Held::Seen(3)));
    assert_eq!(verdict(&p(), &p()), (DriftStatus::Unsettled, None, Some(Unsettled::Held { messages: 3 })));
}

#[test]
fn a_queue_whose_consumers_cannot_be_seen_makes_every_drift_unsettled_but_agreeing_figures_ok() {
    let low = || pass(97, 100, 0, held(Held::Unseen { consumers: 1 }));
    assert_eq!(verdict(&low(), &low()), (DriftStatus::Unsettled, None, Some(Unsettled::HeldUnseen { consumers: 1 })));
    let high = || pass(103, 100, 0, held(Held::Unseen { consumers: 1 }));
    assert_eq!(verdict(&high(), &high()).0, DriftStatus::Unsettled);
    let agree = || pass(100, 100, 0, held(Held::Unseen { consumers: 1 }));
    assert_eq!(verdict(&agree(), &agree()), (DriftStatus::Ok, Some(0), None));
}

#[test]
fn with_nothing_held_a_settled_drift_is_a_verdict() {
    let p = || pass(97, 100, 0, held(Held::Seen(0)));
    assert_eq!(verdict(&p(), &p()), (DriftStatus::RedisLow, Some(-3), None));
}

#[test]
fn a_backlog_past_the_bound_is_unsettled_with_its_depth() {
    let beyond = || InflightRead {
        beyond: vec![Beyond { product: None, depth: Some(100_050), bound: 100_000 }],
        ..Default::default()
    };
    let (first, second) = (pass(50, 100, 0, beyond()), pass(50, 100, 0, beyond()));
    let r = judge(&file(), &1.into(), &first, &second, None, true);
    assert_eq!(r.reading.status, DriftStatus::Unsettled);
    assert_eq!(r.unsettled, Some(Unsettled::Beyond { depth: Some(100_050), bound: 100_000 }));
    assert_eq!(r.reading.in_flight, 100_050, "the source's whole depth is in flight");
}

#[test]
fn an_entry_found_a_row_in_one_pass_and_not_the_other_is_movement_not_drift() {
    // The same entry pending in both passes; the first pass's snapshot already had its row.
    let entry = || InflightRead {
        by_product: HashMap::from([(1.into(), vec![Waiting { order_id: Some("o1".into()), units: 1 }])]),
        ..Default::default()
    };
    let mut first = pass(99, 99, 1, entry());
    first.in_db.insert("o1".into());
    let second = pass(99, 99, 1, entry());
    assert_eq!(verdict(&first, &second), (DriftStatus::Unsettled, None, Some(Unsettled::Moved)));
    let mut again = pass(99, 99, 1, entry());
    again.in_db.insert("o1".into());
    assert_eq!(verdict(&first, &again), (DriftStatus::Ok, Some(0), None));
}

#[test]
fn figures_that_may_predate_the_first_pass_prove_no_drift_but_agreeing_figures_are_ok() {
    let p = || pass(97, 100, 0, held(Held::Seen(0)));
    let r = judge(&file(), &1.into(), &p(), &p(), None, false);
    assert_eq!((r.reading.status, r.unsettled), (DriftStatus::Unsettled, Some(Unsettled::StatsStale)));
    let agree = || pass(100, 100, 0, held(Held::Seen(0)));
    assert_eq!(judge(&file(), &1.into(), &agree(), &agree(), None, false).reading.status, DriftStatus::Ok);
}

#[test]
fn a_queue_the_statistics_do_not_describe_yet_makes_a_drift_unsettled() {
    let p = || pass(97, 100, 0, held(Held::NotYet { consumers: 2 }));
    assert_eq!(verdict(&p(), &p()), (DriftStatus::Unsettled, None, Some(Unsettled::StatsNotYet { consumers: 2 })));
}
