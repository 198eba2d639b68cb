-- A fenced rewrite of Redis stock (contract section 4). The auto-increment id is the fencing
-- token: durable and monotonic, unlike anything kept only in Redis.
CREATE TABLE rewrite_runs (
    id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    product_id     BIGINT UNSIGNED NOT NULL,
    requested_by   VARCHAR(128)    NOT NULL,
    reason         VARCHAR(1000)   NOT NULL,
    dry_run        BOOLEAN         NOT NULL DEFAULT FALSE,
    started_at     DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    finished_at    DATETIME(3)     NULL,
    observed_redis BIGINT          NULL,
    expected_redis BIGINT          NULL,
    delta          BIGINT          NULL,
    before_stock   BIGINT          NULL,
    after_stock    BIGINT          NULL,
    drift_after    BIGINT          NULL,
    outcome        ENUM ('RUNNING', 'APPLIED', 'NOOP', 'REBUILT', 'DRY_RUN', 'REFUSED_FENCE', 'LOCK_BUSY', 'FAILED') NOT NULL DEFAULT 'RUNNING',
    error          VARCHAR(1000)   NULL,
    PRIMARY KEY (id),
    KEY idx_rewrite_runs_product (product_id, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- Every write action of the console and engine operators. Append-only: the triggers below
-- refuse UPDATE and DELETE, so a record cannot be quietly edited after the fact.
CREATE TABLE audit_log (
    id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    at          DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    actor       VARCHAR(128)    NOT NULL,
    role        VARCHAR(32)     NOT NULL,
    environment VARCHAR(16)     NOT NULL,
    action      VARCHAR(64)     NOT NULL,
    target      VARCHAR(128)    NOT NULL,
    reason      VARCHAR(1000)   NOT NULL,
    outcome     VARCHAR(32)     NOT NULL,
    details     JSON            NULL,
    PRIMARY KEY (id),
    KEY idx_audit_action (action, id),
    KEY idx_audit_target (target, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TRIGGER audit_log_refuses_update BEFORE UPDATE ON audit_log FOR EACH ROW
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'audit_log is append-only';

CREATE TRIGGER audit_log_refuses_delete BEFORE DELETE ON audit_log FOR EACH ROW
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'audit_log is append-only';
