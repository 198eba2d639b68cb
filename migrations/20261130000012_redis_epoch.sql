-- The Redis history a reservation belongs to (contract section 4, "Epoch").
--
-- `reserve_seq` numbers a product's reservations in Redis (`sg:{P}:seq`); an exact reading
-- corrects the DB back to its Redis cut by the orders whose number is above it. That is only
-- true while Redis and the DB describe one history: when Redis loses keys (restart without
-- persistence, flush, eviction) or fails over to a replica that lagged, `seq` goes back and
-- numbers the DB already holds are handed out again. Every rebuild of a product's Redis stock
-- starts a new epoch (its fencing token, `sg:{P}:epoch`), and each order records the epoch
-- its number was issued in, so a reading compares numbers of one history only, and can see
-- when the DB holds numbers Redis has not issued (Redis went back: HISTORY_LOST).
-- NULL for orders sold straight through the DB; orders reserved before epochs existed are
-- of epoch 0, as are products warmed without an epoch key.
ALTER TABLE orders ADD COLUMN reserve_epoch BIGINT UNSIGNED NULL AFTER reserve_seq;
UPDATE orders SET reserve_epoch = 0 WHERE reserve_seq IS NOT NULL;

-- One index answers the reading's three questions per product (units after the cut in the
-- cut's epoch, the highest number the DB holds in it, the newest epoch the DB has seen)
-- without reading order rows: buy_count rides along.
ALTER TABLE orders DROP INDEX idx_orders_reserve_seq,
    ADD INDEX idx_orders_reserve (product_id, reserve_epoch, reserve_seq, buy_count);

-- A rewrite whose holder never reported back (it stalled past its lock, or its client gave
-- up) is settled by the next rewrite of the product: that one's fence refuses the old write
-- from then on, so the old run is ABANDONED, not RUNNING forever.
ALTER TABLE rewrite_runs MODIFY COLUMN outcome
    ENUM ('RUNNING', 'APPLIED', 'NOOP', 'REBUILT', 'DRY_RUN', 'REFUSED_FENCE', 'LOCK_BUSY', 'FAILED', 'ABANDONED')
    NOT NULL DEFAULT 'RUNNING';
