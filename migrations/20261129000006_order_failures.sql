-- Orders Redis accepted but the DB refused (Redis over-issued: its stock was higher than the
-- DB's). The buyer is told FAILED on GET /orders/{order_no}; the console lists them as
-- anomalies. One row per order number.
CREATE TABLE order_failures (
    order_no   VARCHAR(40)     NOT NULL,
    product_id BIGINT UNSIGNED NOT NULL,
    user_id    BIGINT UNSIGNED NOT NULL,
    qty        INT             NOT NULL,
    reason     VARCHAR(64)     NOT NULL,
    created_at DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    PRIMARY KEY (order_no),
    KEY idx_order_failures_product (product_id, created_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
