-- One row every switch change locks first (`SELECT ... FOR UPDATE`), so changes commit one
-- at a time, in revision order. Without it, revisions (auto-increment ids) could commit out
-- of order: an engine that saw revision R2 could miss an R1 < R2 still uncommitted, yet
-- report "applied R1" because it reports the highest revision it saw. With it, any
-- snapshot that holds R2 holds every R1 < R2. `revision` is the newest change, kept for
-- people reading the table.
CREATE TABLE switch_head (
    id       TINYINT UNSIGNED NOT NULL,
    revision BIGINT UNSIGNED  NOT NULL DEFAULT 0,
    PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

INSERT INTO switch_head (id, revision) SELECT 1, COALESCE(MAX(revision), 0) FROM switch_changes;
