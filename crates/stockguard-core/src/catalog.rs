//! The products of a sale, as listed by the desktop app and `stockguard products`.

use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
pub struct Product {
    pub product_id: u64,
    pub name: String,
    pub initial_stock: i32,
    pub stock: i32,
    pub per_user_limit: i32,
}

/// Every product of the sale, in id order.
pub async fn list_products(pool: &MySqlPool) -> Result<Vec<Product>, sqlx::Error> {
    sqlx::query_as("SELECT product_id, name, initial_stock, stock, per_user_limit FROM inventory ORDER BY product_id")
        .fetch_all(pool)
        .await
}
