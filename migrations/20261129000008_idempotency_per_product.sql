-- An idempotency key is scoped to (buyer, product), as it is in Redis (`sg:{P}:idem` lives
-- on the product's slot). With the key unique per buyer alone, a buyer who used one key for
-- two products had the second order refused by the DB after Redis accepted it.
ALTER TABLE orders
    DROP INDEX uk_orders_user_idempotency,
    ADD UNIQUE KEY uk_orders_user_product_idempotency (user_id, product_id, idempotency_key);
