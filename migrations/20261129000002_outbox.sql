-- Stock returned in the DB (close, cancel) but not yet returned to Redis: "pending release".
-- Written in the same transaction as the compare-and-set of the order and the stock update;
-- a relay applies it to Redis (idempotently, via `sg:{P}:released`) and marks it DONE.
-- One release per order at most (`uk_outbox_kind_order`).
CREATE TABLE outbox (
    id         BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    kind       ENUM ('RELEASE') NOT NULL DEFAULT 'RELEASE',
    product_id BIGINT UNSIGNED  NOT NULL,
    order_no   VARCHAR(40)      NOT NULL,
    qty        INT              NOT NULL,
    status     ENUM ('PENDING', 'DONE') NOT NULL DEFAULT 'PENDING',
    attempts   INT              NOT NULL DEFAULT 0,
    created_at DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    done_at    DATETIME(3)      NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uk_outbox_kind_order (kind, order_no),
    -- serves "SUM(qty) of pending releases per product" without reading rows
    KEY idx_outbox_pending (status, product_id, qty)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
