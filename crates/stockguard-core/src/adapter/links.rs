//! The connections a sale read over its adapter needs: its DB and its Redis, each absent when
//! the sale has none. Every reading, repair, switch and scan of the sale takes them.

use sqlx::MySqlPool;

use super::file::AdapterFile;

/// The connections a reading needs: the sale's DB (a SELECT-only account will do) and Redis,
/// each absent when the sale has none.
pub struct SaleLinks<'a, C> {
    pub db: Option<&'a MySqlPool>,
    pub redis: Option<&'a C>,
}

impl<'a> SaleLinks<'a, crate::redis_link::RedisLink> {
    /// The links of a sale whose MySQL and Redis are `conns` (the profile's): each only when the
    /// file reads that side.
    pub fn of(file: &AdapterFile, conns: &'a crate::connect::Connections) -> Self {
        SaleLinks {
            db: (file.stock.is_some() || file.orders.is_some()).then_some(&conns.mysql),
            redis: file.redis.as_ref().map(|_| &conns.redis),
        }
    }
}
