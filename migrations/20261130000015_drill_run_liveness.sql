-- A drill run says who runs it and that it is alive: the runner writes its heartbeat every
-- second, so `drill status` and the console show a runner that died (heartbeat stale) apart
-- from one that runs. A halt is requested here, by anyone allowed to operate the sale, and
-- the runner hears it on its next heartbeat; a run it ends so is HALTED. The plan's hash and
-- the load's seed make a re-run send the same request schedule.
ALTER TABLE drill_runs
    MODIFY COLUMN status ENUM ('RUNNING', 'PASSED', 'FAILED', 'ABORTED', 'HALTED') NOT NULL DEFAULT 'RUNNING',
    ADD COLUMN plan_hash         CHAR(64)        NULL,
    ADD COLUMN seed              BIGINT UNSIGNED NULL,
    ADD COLUMN runner            VARCHAR(128)    NULL,
    ADD COLUMN heartbeat_at      DATETIME(3)     NULL,
    ADD COLUMN halt_requested_at DATETIME(3)     NULL,
    ADD COLUMN halt_reason       VARCHAR(512)    NULL,
    ADD COLUMN halted_by         VARCHAR(128)    NULL,
    ADD KEY idx_drill_runs_status (status, id);
