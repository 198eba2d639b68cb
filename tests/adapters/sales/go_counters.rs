//! A sale shaped like a public Go ticket sale that keeps only counters, no database: one Redis
//! hash per product with `ticket_total_nums` and `ticket_sold_nums`.
//!
//! Front half (`buy`): a Lua script adds one to the sold count when it is below the total.
//! There is no back half: a sold ticket is only a count. Fault: sold above total (OVERSOLD).

use super::{rd, redis_conn, sale_prefix, Answer, Buy, Leftovers, SaleError};

/// Their Lua: sell one when sold < total.
const SELL_ONE: &str = r"
local total = tonumber(redis.call('HGET', KEYS[1], 'ticket_total_nums') or '0')
local sold = tonumber(redis.call('HGET', KEYS[1], 'ticket_sold_nums') or '0')
if sold < total then
  redis.call('HINCRBY', KEYS[1], 'ticket_sold_nums', 1)
  return 1
end
return 0";

/// The counters-only sale.
pub struct GoCountersSale {
    pub prefix: String,
    pub products: Vec<i64>,
    redis: redis::aio::MultiplexedConnection,
    leftovers: Leftovers,
}

impl GoCountersSale {
    /// Creates a hash per product of `products` as `(id, total)`, nothing sold.
    pub async fn start(products: &[(i64, i64)]) -> Self {
        let prefix = sale_prefix("gc");
        let leftovers = Leftovers::new(&prefix, false, None);
        let mut redis = redis_conn().await;
        for &(id, total) in products {
            let _: () = redis::cmd("HSET")
                .arg(ticket_key(&prefix, id))
                .arg("ticket_total_nums")
                .arg(total)
                .arg("ticket_sold_nums")
                .arg(0)
                .query_async(&mut redis)
                .await
                .unwrap();
        }
        Self { prefix, products: products.iter().map(|&(id, _)| id).collect(), redis, leftovers }
    }

    /// The adapter file a user would write for this sale: products listed, no tables.
    pub fn adapter_toml(&self) -> String {
        let products = self.products.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
        format!(
            r#"[sale]
name = "go-counters-{prefix}"
products = [{products}]

[redis]
stock_hash = {{ key = "{prefix}:ticket:${{id}}", total = "ticket_total_nums", sold = "ticket_sold_nums" }}

[inflight]
source = "none"

[repair]
rewrite = "off"
"#,
            prefix = self.prefix,
        )
    }

    /// `n` more sold than the script would allow (sold above total: OVERSOLD).
    pub async fn oversell(&self, product: i64, n: i64) {
        let _: i64 = redis::cmd("HINCRBY")
            .arg(ticket_key(&self.prefix, product))
            .arg("ticket_sold_nums")
            .arg(n)
            .query_async(&mut self.redis.clone())
            .await
            .unwrap();
    }

    /// `(total, sold)` of a product.
    pub async fn counters(&self, product: i64) -> (i64, i64) {
        redis::cmd("HMGET")
            .arg(ticket_key(&self.prefix, product))
            .arg("ticket_total_nums")
            .arg("ticket_sold_nums")
            .query_async(&mut self.redis.clone())
            .await
            .unwrap()
    }

    /// Deletes the hashes.
    pub async fn cleanup(&self) {
        self.leftovers.remove().await;
    }
}

impl Buy for GoCountersSale {
    async fn buy(&self, _user: i64, product: i64) -> Result<Answer, SaleError> {
        let sold: i64 = redis::Script::new(SELL_ONE)
            .key(ticket_key(&self.prefix, product))
            .invoke_async(&mut self.redis.clone())
            .await
            .map_err(rd("sell a ticket"))?;
        Ok(if sold == 1 { Answer::Accepted } else { Answer::SoldOut })
    }
}

fn ticket_key(prefix: &str, product: i64) -> String {
    format!("{prefix}:ticket:{product}")
}
