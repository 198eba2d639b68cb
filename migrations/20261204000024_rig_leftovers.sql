-- What a drill leaves behind is cleared once its run is over (issue 26).
--
-- A run whose runner stopped without finishing (killed, its machine gone: its heartbeat older
-- than the runner's lease) is ended DEAD by the next command that looks (`drill run`,
-- `drill status`, `degrade status`), rather than staying RUNNING for ever.
ALTER TABLE drill_runs
    MODIFY COLUMN status ENUM ('RUNNING', 'PASSED', 'FAILED', 'ABORTED', 'HALTED', 'DEAD') NOT NULL DEFAULT 'RUNNING';

-- The heartbeats of a drill's engines once its run is over (any status but RUNNING), and
-- nothing else: never a sale engine's (home `global`), never a running drill's. The
-- facilitator and on-call may DELETE from this view, not from `engine_heartbeats`: a blanket
-- DELETE there would let them remove a live sale engine's heartbeat while an exit waits for
-- its acknowledgement. The view runs with its definer's rights (whoever ran the migrations),
-- and a DELETE through it removes only rows it shows.
CREATE SQL SECURITY DEFINER VIEW ended_rig_heartbeats AS
SELECT instance_id, home, last_seen
FROM engine_heartbeats
WHERE home LIKE 'rig:%'
  AND home IN (SELECT CONCAT('rig:', id) FROM drill_runs WHERE status <> 'RUNNING');

-- An engine's home is fixed for its instance id: otherwise an account that writes heartbeats
-- (a facilitator's, whose drill engines beat) could move a sale engine's row to an ended
-- rig's home and delete it through the view above. An engine started in another home takes
-- another instance id (a drill's are `drill<run id>-e<n>`).
CREATE TRIGGER engine_heartbeats_home_fixed BEFORE UPDATE ON engine_heartbeats FOR EACH ROW
BEGIN
    IF NOT (NEW.home <=> OLD.home) THEN
        SIGNAL SQLSTATE '45000'
            SET MESSAGE_TEXT = 'an engine''s home is fixed for its instance id: start it under another instance id';
    END IF;
END;
