-- The timeout closer asks "which WAIT_PAY orders are past their deadline?". An index on the
-- deadline alone would walk every closed and paid order whose deadline has passed, a set that
-- only grows; (status, pay_deadline) reaches exactly the WAIT_PAY ones. It does not cover the
-- reconciliation query (no product_id, no buy_count), so it does not compete with
-- idx_orders_recon there (a schema test checks the plan).
ALTER TABLE orders DROP INDEX idx_orders_deadline, ADD INDEX idx_orders_close (status, pay_deadline);
