-- Acknowledgements of alerts (issue 17): who (the server's word, `USER()`, as for the audit
-- log), why, until when. An alert is named by its key (`drift:1016`, `oversold:1016`,
-- `backlog`, `breaker:<instance>`); at most one acknowledgement of a key is open at a time.
-- An acknowledgement closes by itself when its alert clears (or its time is up), so a
-- forgotten one never hides the next incident (Alertmanager's silences do: karma#6314).
CREATE TABLE alert_acks (
    id            BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    alert_key     VARCHAR(128)    NOT NULL,
    kind          VARCHAR(32)     NOT NULL,
    product_id    BIGINT UNSIGNED NULL,
    acked_by      VARCHAR(128)    NOT NULL DEFAULT '',
    claimed_by    VARCHAR(128)    NOT NULL DEFAULT '',
    reason        VARCHAR(500)    NOT NULL,
    acked_at      DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    until_at      DATETIME(3)     NULL,
    closed_at     DATETIME(3)     NULL,
    close_reason  VARCHAR(200)    NULL,
    open_key      VARCHAR(128) AS (IF(closed_at IS NULL, alert_key, NULL)) STORED,
    PRIMARY KEY (id),
    UNIQUE KEY uk_alert_acks_open (open_key),
    KEY idx_alert_acks_key (alert_key, acked_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TRIGGER alert_acks_by_server BEFORE INSERT ON alert_acks FOR EACH ROW
    SET NEW.claimed_by = NEW.acked_by, NEW.acked_by = SUBSTRING_INDEX(USER(), '@', 1);
