-- The facilitator's review of a drill run: what the team takes away from it, written after
-- the run by anyone allowed to operate the sale (audited), and shown in the run's report as
-- its follow-ups, next to one per failed check. Writing it again replaces it; the audit log
-- keeps every version.
ALTER TABLE drill_runs
    ADD COLUMN review_notes TEXT         NULL,
    ADD COLUMN review_by    VARCHAR(128) NULL,
    ADD COLUMN review_at    DATETIME(3)  NULL;
