-- The sale's timeline (issue 53) reads each record of a time window: these indexes let it
-- seek to the window's start instead of scanning each table whole. The audit log, the switch
-- changes, rewrite runs, acknowledgements (taken and closed), compensation steps, drill runs
-- (started and ended) and their faults (among a run's many events) are each read by their time.
ALTER TABLE audit_log ADD KEY idx_audit_at (at);
ALTER TABLE switch_changes ADD KEY idx_switch_changes_at (changed_at);
ALTER TABLE rewrite_runs ADD KEY idx_rewrite_runs_started (started_at);
ALTER TABLE alert_acks ADD KEY idx_alert_acks_acked (sale, acked_at), ADD KEY idx_alert_acks_closed (sale, closed_at);
ALTER TABLE compensation_steps ADD KEY idx_compensation_steps_at (at);
ALTER TABLE drill_runs ADD KEY idx_drill_runs_started (started_at), ADD KEY idx_drill_runs_finished (finished_at);
ALTER TABLE drill_events ADD KEY idx_drill_events_kind_at (kind, at);
