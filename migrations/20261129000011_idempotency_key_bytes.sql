-- An idempotency key is its exact bytes, as it is in Redis (a hash field of `sg:{P}:idem`).
-- As a utf8mb4_general_ci VARCHAR it compared case-blind and ignored trailing spaces, so
-- after Redis had accepted "pay", "PAY" and "pay " as three orders, the DB refused two of
-- them (IDEMPOTENCY_CONFLICT), and the degraded path answered "PAY" with the order of "pay".
-- VARBINARY compares bytes, with no pad, on MySQL 8 and MariaDB alike.
ALTER TABLE orders MODIFY idempotency_key VARBINARY(64) NULL;
