-- Oversell compensation: a case per incident, and every step taken on it (proposal,
-- approval, rejection, execution, notes) as an action row.
CREATE TABLE compensation_cases (
    id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    product_id     BIGINT UNSIGNED NOT NULL,
    oversold_units INT             NOT NULL,
    status         ENUM ('OPEN', 'PROPOSED', 'APPROVED', 'REJECTED', 'EXECUTED', 'CLOSED') NOT NULL DEFAULT 'OPEN',
    summary        VARCHAR(1000)   NOT NULL,
    opened_by      VARCHAR(128)    NOT NULL,
    opened_at      DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    updated_at     DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
    PRIMARY KEY (id),
    KEY idx_compensation_product (product_id, status)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE compensation_actions (
    id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    case_id      BIGINT UNSIGNED NOT NULL,
    at           DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    actor        VARCHAR(128)    NOT NULL,
    role         VARCHAR(32)     NOT NULL,
    action       ENUM ('PROPOSE', 'APPROVE', 'REJECT', 'EXECUTE', 'NOTE', 'CLOSE') NOT NULL,
    order_no     VARCHAR(40)     NULL,
    amount_cents BIGINT          NULL,
    note         VARCHAR(1000)   NOT NULL,
    PRIMARY KEY (id),
    KEY idx_compensation_actions_case (case_id, id),
    CONSTRAINT fk_compensation_actions_case FOREIGN KEY (case_id) REFERENCES compensation_cases (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- Fault drills and their timelines (for replay).
CREATE TABLE drill_runs (
    id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    scenario    VARCHAR(64)     NOT NULL,
    started_by  VARCHAR(128)    NOT NULL,
    started_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    finished_at DATETIME(3)     NULL,
    status      ENUM ('RUNNING', 'PASSED', 'FAILED', 'ABORTED') NOT NULL DEFAULT 'RUNNING',
    parameters  JSON            NULL,
    summary     JSON            NULL,
    PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE drill_events (
    id        BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    run_id    BIGINT UNSIGNED NOT NULL,
    at        DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    offset_ms BIGINT          NOT NULL,
    kind      VARCHAR(64)     NOT NULL,
    detail    JSON            NULL,
    PRIMARY KEY (id),
    KEY idx_drill_events_run (run_id, id),
    CONSTRAINT fk_drill_events_run FOREIGN KEY (run_id) REFERENCES drill_runs (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
