//! The products of a sale, as listed by the desktop app and `stockguard products`.

use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

use crate::switch::Home;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
pub struct Product {
    pub product_id: u64,
    pub name: String,
    pub initial_stock: i32,
    pub stock: i32,
    pub per_user_limit: i32,
}

/// Every product of the sale, in id order: its own, on no drill rig (a drill's products are
/// its rig's, shown with its run).
pub async fn list_products(pool: &MySqlPool) -> Result<Vec<Product>, sqlx::Error> {
    sqlx::query_as(
        "SELECT product_id, name, initial_stock, stock, per_user_limit FROM inventory WHERE rig IS NULL \
         ORDER BY product_id",
    )
    .fetch_all(pool)
    .await
}

/// The products of `home`, in id order: the sale's (on no drill rig) or one drill rig's
/// (`inventory.rig`). What an engine of that home lists for its consumers.
pub async fn home_products(pool: &MySqlPool, home: Home) -> Result<Vec<u64>, sqlx::Error> {
    sqlx::query_scalar("SELECT product_id FROM inventory WHERE rig <=> ? ORDER BY product_id")
        .bind(home.rig())
        .fetch_all(pool)
        .await
}
