-- A run that broke no invariant but proved nothing (issue 51): a fault of its file did not
-- take effect (or it had none), or the rig's engines were not back at the end. It ends
-- INCONCLUSIVE, not PASSED.
ALTER TABLE drill_runs
    MODIFY COLUMN status ENUM ('RUNNING', 'PASSED', 'FAILED', 'INCONCLUSIVE', 'ABORTED', 'HALTED', 'DEAD') NOT NULL DEFAULT 'RUNNING';
