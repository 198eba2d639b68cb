-- The sale overview's stock burn-down (issue 17) sums the units taken per time bucket, for
-- one product or the whole sale: `SELECT FLOOR(...created_at...) b, SUM(buy_count) FROM
-- orders [WHERE product_id = ?] GROUP BY b`. This index covers it: a range of one product's
-- entries, or a scan of this narrow index for the whole sale, never the table's rows. It
-- holds no status, so the reconciliation query keeps idx_orders_recon.
ALTER TABLE orders ADD INDEX idx_orders_created (product_id, created_at, buy_count);
