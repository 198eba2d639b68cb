-- Rewrites in batches (issue 16, the guided exit over thousands of products): one multi-row
-- INSERT starts the runs of many products, and each product's fencing token (its run id) is
-- read back by the batch's key. Auto-increment ids of one multi-row INSERT need not be
-- consecutive (`innodb_autoinc_lock_mode = 2`, MySQL 8's default, interleaves them with
-- concurrent inserts), so `LAST_INSERT_ID()` plus an offset would be a guess. NULL for a
-- run started on its own.
ALTER TABLE rewrite_runs
    ADD COLUMN batch CHAR(32) NULL AFTER dry_run,
    ADD KEY idx_rewrite_runs_batch (batch);
