-- The exact drift reading asks "which orders of product P were reserved after the Redis cut
-- (reserve_seq > S)?"; this index answers it without touching other products' orders.
ALTER TABLE orders ADD INDEX idx_orders_reserve_seq (product_id, reserve_seq);

-- ... and "which releases were marked done in the last minute?" (one applied to Redis after
-- the cut may already be marked done by the time the DB is read).
ALTER TABLE outbox ADD INDEX idx_outbox_done (status, done_at);
