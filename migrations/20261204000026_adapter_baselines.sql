-- Baselines of sales read over an adapter (issue 28): the initial stock a sale that does not
-- store one had when someone recorded it, with who and why. Lives in the state database, the
-- console's own, never in the sale's.
CREATE TABLE adapter_baselines (
    sale VARCHAR(128) NOT NULL,
    product_id BIGINT UNSIGNED NOT NULL,
    initial_stock BIGINT NOT NULL,
    reason VARCHAR(1000) NOT NULL,
    recorded_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    recorded_by VARCHAR(288) NOT NULL,
    PRIMARY KEY (sale, product_id)
) ENGINE = InnoDB;
