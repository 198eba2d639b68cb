-- The degrade switch lives in MySQL because it must work when Redis is down.
-- Every change appends to `switch_changes`; its auto-increment id is the switch revision,
-- global and monotonic, so an engine can say "I applied revision R" with one number.
-- `degrade_switch` holds the current mode per scope ('global' or 'product:<id>').
CREATE TABLE switch_changes (
    revision   BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    scope      VARCHAR(64)     NOT NULL,
    mode       ENUM ('NORMAL', 'DEGRADED') NOT NULL,
    changed_by VARCHAR(128)    NOT NULL,
    reason     VARCHAR(1000)   NOT NULL,
    changed_at DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    PRIMARY KEY (revision)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE degrade_switch (
    scope      VARCHAR(64)     NOT NULL,
    product_id BIGINT UNSIGNED NULL,
    mode       ENUM ('NORMAL', 'DEGRADED') NOT NULL,
    revision   BIGINT UNSIGNED NOT NULL,
    changed_by VARCHAR(128)    NOT NULL,
    reason     VARCHAR(1000)   NOT NULL,
    changed_at DATETIME(3)     NOT NULL,
    PRIMARY KEY (scope)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- One row per engine instance, rewritten on every heartbeat.
CREATE TABLE engine_heartbeats (
    instance_id      VARCHAR(64)     NOT NULL,
    listen_addr      VARCHAR(128)    NOT NULL,
    started_at       DATETIME(3)     NOT NULL,
    last_seen        DATETIME(3)     NOT NULL,
    applied_revision BIGINT UNSIGNED NOT NULL DEFAULT 0,
    applied_at       DATETIME(3)     NULL,
    effective_mode   ENUM ('NORMAL', 'DEGRADED') NOT NULL DEFAULT 'NORMAL',
    breaker_state    ENUM ('CLOSED', 'OPEN', 'HALF_OPEN') NOT NULL DEFAULT 'CLOSED',
    breaker_reason   VARCHAR(255)    NULL,
    PRIMARY KEY (instance_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
