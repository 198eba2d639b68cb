//! Each test sale on its own, with no Stockguard: its order path sells exactly its stock under
//! concurrent buyers (so a later drift is the fault's, not the sale's), and its fault injectors
//! change the sale's own truth the way they say.

use std::sync::Arc;
use std::time::Duration;

use crate::sales::buckets::BucketSale;
use crate::sales::course_stream::{self, CourseStreamSale};
use crate::sales::fastapi_rabbit::FastapiRabbitSale;
use crate::sales::go_counters::GoCountersSale;
use crate::sales::mall_lock::{self, MallLockSale};
use crate::sales::miaosha_negative::MiaoshaSale;
use crate::sales::{Answer, Buy, Tally, Traffic};
use crate::support::waits::wait_for;

const DRAIN: Duration = Duration::from_secs(20);

fn assert_sold(tally: &Tally, accepted: i64, sold_out: i64) {
    assert!(tally.failed.is_empty(), "the order path failed: {:?}", tally.failed);
    assert_eq!((tally.accepted, tally.sold_out), (accepted, sold_out), "accepted and sold-out answers");
}

#[tokio::test]
async fn fastapi_rabbit_sells_exactly_its_stock_through_its_queue() {
    let sale = Arc::new(FastapiRabbitSale::start(&[(1, 10), (2, 10)]).await);
    let tally = Traffic::buyers(80).on(&[1, 2]).run(&sale).await;
    assert_sold(&tally, 20, 60);
    wait_for("the consumer wrote every order", DRAIN, async || {
        sale.orders(1).await == 10 && sale.orders(2).await == 10
    })
    .await;
    for p in [1, 2] {
        assert_eq!((sale.redis_stock(p).await, sale.db_stock(p).await), (Some(0), 0), "product {p} sold out in both");
    }
    assert_eq!(sale.queue_depth().await, 0);
    sale.cleanup().await;
}

#[tokio::test]
async fn fastapi_rabbit_restart_while_messages_wait_leaves_redis_high_by_the_queued_ones() {
    let sale = Arc::new(FastapiRabbitSale::start(&[(1, 10)]).await);
    assert_sold(&Traffic::buyers(3).on(&[1]).run(&sale).await, 3, 0);
    wait_for("the first orders are written", DRAIN, async || sale.orders(1).await == 3).await;
    sale.pause_consumer().await;
    assert_sold(&Traffic::users(4..=7).on(&[1]).run(&sale).await, 4, 0);
    assert_eq!(sale.queue_depth().await, 4, "the paused consumer left the messages queued");
    assert_eq!((sale.redis_stock(1).await, sale.db_stock(1).await), (Some(3), 7));

    sale.restart_overwrites_redis().await;
    sale.resume_consumer().await;
    wait_for("the queued orders are written", DRAIN, async || sale.orders(1).await == 7).await;

    assert_eq!(sale.db_stock(1).await, 3);
    assert_eq!(sale.redis_stock(1).await, Some(7), "Redis is high by the 4 queued");
    sale.cleanup().await;
}

#[tokio::test]
async fn fastapi_rabbit_a_message_lost_after_redis_leaves_redis_one_low() {
    let sale = Arc::new(FastapiRabbitSale::start(&[(1, 10)]).await);
    assert_sold(&Traffic::buyers(2).on(&[1]).run(&sale).await, 2, 0);
    sale.lose_one_after_redis(1).await;
    wait_for("the orders are written", DRAIN, async || sale.orders(1).await == 2).await;
    assert_eq!((sale.redis_stock(1).await, sale.db_stock(1).await), (Some(7), 8));
    sale.cleanup().await;
}

#[tokio::test]
async fn course_stream_sells_exactly_its_stock_once_per_buyer() {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 10), (2, 10), (3, 5)]).await);
    assert_sold(&Traffic::buyers(80).on(&[1, 2]).run(&sale).await, 20, 60);
    assert_eq!(sale.buy(7, 3).await.unwrap(), Answer::Accepted);
    assert_eq!(sale.buy(7, 3).await.unwrap(), Answer::Refused, "a buyer gets one voucher at most");
    wait_for("the consumer wrote every order", DRAIN, async || {
        sale.orders(1).await == 10
            && sale.orders(2).await == 10
            && sale.orders(3).await == 1
            && sale.stream_backlog().await == 0
    })
    .await;
    for p in [1, 2] {
        assert_eq!((sale.redis_stock(p).await, sale.db_stock(p).await), (Some(0), 0), "voucher {p} sold out in both");
        assert_eq!(sale.buyers(p).await, 10);
    }
    sale.cleanup().await;
}

#[tokio::test]
async fn course_stream_consumer_resumes_with_the_entries_appended_while_paused() {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 10)]).await);
    sale.pause_consumer().await;
    assert_sold(&Traffic::buyers(4).on(&[1]).run(&sale).await, 4, 0);
    assert_eq!(sale.stream_backlog().await, 4, "the entries wait in the stream");
    assert_eq!(sale.orders(1).await, 0);
    sale.resume_consumer().await;
    wait_for("the entries become orders", DRAIN, async || sale.orders(1).await == 4).await;
    wait_for("the entries are acknowledged", DRAIN, async || sale.stream_backlog().await == 0).await;
    sale.cleanup().await;
}

#[tokio::test]
async fn course_stream_faults_change_its_truth_as_they_say() {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 5), (2, 5)]).await);
    assert_sold(&Traffic::buyers(10).on(&[1, 2]).run(&sale).await, 10, 0);
    wait_for("the orders are written", DRAIN, async || sale.orders(1).await == 5 && sale.orders(2).await == 5).await;

    let order = sale.order_ids(1, course_stream::status::UNPAID).await[0];
    assert!(sale.cancel(order).await, "a live order cancels");
    assert!(!sale.cancel(order).await, "a cancelled order does not cancel twice");
    assert_eq!((sale.orders(1).await, sale.db_stock(1).await, sale.redis_stock(1).await), (4, 1, Some(1)));

    let paid = sale.order_ids(1, course_stream::status::UNPAID).await[0];
    sale.set_status(paid, course_stream::status::PAID).await;
    assert_eq!(
        (sale.orders(1).await, sale.order_ids(1, course_stream::status::PAID).await),
        (4, vec![paid]),
        "a paid order is live"
    );

    sale.lose_one_after_redis(1).await;
    assert_eq!((sale.db_stock(1).await, sale.redis_stock(1).await), (1, Some(0)), "Redis one low");

    sale.oversell(2, 2).await;
    assert_eq!((sale.orders(2).await, sale.db_stock(2).await), (7, -2), "7 live orders of 5, stock below zero");

    sale.delete_key(2).await;
    assert_eq!(sale.redis_stock(2).await, None);
    sale.cleanup().await;
}

#[tokio::test]
async fn mall_lock_locks_exactly_its_stock_and_payment_and_closing_settle_the_lock() {
    let sale = Arc::new(MallLockSale::start(&[(1, 10), (2, 10)]).await);
    assert_sold(&Traffic::buyers(80).on(&[1, 2]).run(&sale).await, 20, 60);
    for p in [1, 2] {
        assert_eq!((sale.db_stock(p).await, sale.locked(p).await), (10, 10), "SKU {p} fully locked, nothing shipped");
        assert_eq!(sale.units(p, mall_lock::status::UNPAID).await, 10);
    }
    let unpaid = sale.order_ids(1, mall_lock::status::UNPAID).await;
    for &order in &unpaid[..6] {
        assert!(sale.pay(order).await.unwrap());
    }
    for &order in &unpaid[6..] {
        assert!(sale.close(order).await.unwrap());
    }
    assert!(!sale.pay(unpaid[9]).await.unwrap(), "a closed order is not paid");
    assert_eq!((sale.db_stock(1).await, sale.locked(1).await), (4, 0), "6 shipped, 4 free again");
    assert_eq!(sale.place(99, 1, 4).await.unwrap().map(|_| ()), Some(()), "the closed units sell again");
    assert_eq!(sale.place(100, 1, 1).await.unwrap(), None);

    sale.strand_lock(2, 3).await;
    assert_eq!(sale.locked(2).await - sale.units(2, mall_lock::status::UNPAID).await, 3, "3 locked with no order");
    sale.cleanup().await;
}

#[tokio::test]
async fn buckets_sell_exactly_their_stock_and_a_drifted_bucket_keeps_the_total() {
    let sale = Arc::new(BucketSale::start(&[(1, 10), (2, 10)], 4).await);
    assert_eq!(sale.db_buckets(1).await, vec![3, 3, 2, 2]);
    assert_sold(&Traffic::buyers(80).on(&[1, 2]).run(&sale).await, 20, 60);
    for p in [1, 2] {
        assert_eq!((sale.redis_stock(p).await, sale.db_stock(p).await, sale.orders(p).await), (0, 0, 10));
        assert_eq!(sale.redis_buckets(p).await, vec![Some(0); 4]);
        assert_eq!(sale.db_buckets(p).await, vec![0; 4]);
    }
    sale.drift_bucket(1, 1, 2).await;
    assert_eq!(sale.redis_buckets(1).await, vec![Some(0), Some(2), Some(-2), Some(0)]);
    assert_eq!(sale.redis_stock(1).await, 0, "the total looks right");
    sale.cleanup().await;
}

#[tokio::test]
async fn miaosha_sells_exactly_its_stock_and_rejected_tries_push_its_counter_below_zero() {
    let sale = Arc::new(MiaoshaSale::start(&[(1, 10), (2, 10), (3, 5)]).await);
    assert_sold(&Traffic::buyers(80).on(&[1, 2]).run(&sale).await, 20, 60);
    for p in [1, 2] {
        assert_eq!((sale.db_stock(p).await, sale.orders(p).await), (0, 10));
        assert_eq!(sale.redis_stock(p).await, Some(-30), "40 tries on 10 units: 30 below zero");
    }
    assert_eq!(sale.buy(7, 3).await.unwrap(), Answer::Accepted);
    assert_eq!(sale.buy(7, 3).await.unwrap(), Answer::Refused, "one order per buyer");
    assert_eq!(sale.redis_stock(3).await, Some(4), "a refused buyer takes nothing from the counter");
    sale.rejected_tries(1, 1000, 5).await;
    assert_eq!(sale.redis_stock(1).await, Some(-35));
    assert_eq!((sale.db_stock(1).await, sale.orders(1).await), (0, 10), "no unit moved");
    sale.cleanup().await;
}

#[tokio::test]
async fn go_counters_sell_exactly_their_total_and_an_oversell_puts_sold_above_it() {
    let sale = Arc::new(GoCountersSale::start(&[(1, 10), (2, 10)]).await);
    assert_sold(&Traffic::buyers(80).on(&[1, 2]).run(&sale).await, 20, 60);
    assert_eq!((sale.counters(1).await, sale.counters(2).await), ((10, 10), (10, 10)));
    sale.oversell(2, 3).await;
    assert_eq!(sale.counters(2).await, (10, 13));
    sale.cleanup().await;
}
