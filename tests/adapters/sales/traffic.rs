//! Buyers for a sale: each buyer a tokio task calling the sale's order path once, all at once,
//! with their answers counted.

use std::future::Future;
use std::ops::RangeInclusive;
use std::sync::Arc;

use super::SaleError;

/// What a sale's order path told a buyer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The sale took the order (a unit is the buyer's, now or once its consumer runs).
    Accepted,
    /// No unit left for this buyer.
    SoldOut,
    /// The buyer already has one (one per user).
    Refused,
}

/// A sale's front half: one buyer asking for one unit of one product.
pub trait Buy: Send + Sync + 'static {
    fn buy(&self, user: i64, product: i64) -> impl Future<Output = Result<Answer, SaleError>> + Send;
}

/// The answers of a run of buyers.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub accepted: i64,
    pub sold_out: i64,
    pub refused: i64,
    /// Errors of the order path, as text (the step and its cause).
    pub failed: Vec<String>,
}

/// Users `users`, all at once, user `u` buying `products[u % len]`.
pub struct Traffic {
    users: RangeInclusive<i64>,
    products: Vec<i64>,
}

impl Traffic {
    /// `n` buyers, users 1..=n.
    pub fn buyers(n: i64) -> Self {
        Self { users: 1..=n, products: Vec::new() }
    }

    /// The buyers `users` (for a second wave of buyers who did not buy before).
    pub fn users(users: RangeInclusive<i64>) -> Self {
        Self { users, products: Vec::new() }
    }

    /// The products bought, shared out among the buyers by user id.
    pub fn on(mut self, products: &[i64]) -> Self {
        self.products = products.to_vec();
        self
    }

    /// Runs the buyers and waits for every answer.
    pub async fn run<S: Buy>(self, sale: &Arc<S>) -> Tally {
        assert!(!self.products.is_empty(), "Traffic::on names the products bought");
        let products = Arc::new(self.products);
        let buyers: Vec<_> = self
            .users
            .map(|user| {
                let sale = Arc::clone(sale);
                let products = Arc::clone(&products);
                tokio::spawn(async move {
                    let product = products[user.rem_euclid(products.len() as i64) as usize];
                    sale.buy(user, product).await
                })
            })
            .collect();
        let mut tally = Tally::default();
        for buyer in buyers {
            match buyer.await.expect("a buyer's task does not panic") {
                Ok(Answer::Accepted) => tally.accepted += 1,
                Ok(Answer::SoldOut) => tally.sold_out += 1,
                Ok(Answer::Refused) => tally.refused += 1,
                Err(e) => tally.failed.push(e.to_string()),
            }
        }
        tally
    }

    /// Runs the buyers in the background (live traffic while a test does something else).
    pub fn spawn<S: Buy>(self, sale: &Arc<S>) -> tokio::task::JoinHandle<Tally> {
        let sale = Arc::clone(sale);
        tokio::spawn(async move { self.run(&sale).await })
    }
}
