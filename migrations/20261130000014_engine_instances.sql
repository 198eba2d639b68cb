-- One row per engine start. Its id, wrapped to 24 bits, is the instance tag in every order
-- number that engine issues (src/engine/order_no.rs): handed out by the DB, so two running
-- engines never share a tag (a random tag clashed in about 2% of starts of a 50-instance
-- fleet, and a clash made two buyers' orders one). Rows are never updated; they also say
-- which engine issued a number when one is questioned.
CREATE TABLE engine_instances (
    id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    instance_id VARCHAR(128)    NOT NULL,
    started_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
