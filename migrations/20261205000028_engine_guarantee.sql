-- What each engine's ACCEPTED answers survive (issue 30), written with its heartbeat so the
-- console's health strip can say it: `replica`, `db_write_through`, `no_replicas` or
-- `none_opted_out`. NULL: an engine that does not say (built before this column).
ALTER TABLE engine_heartbeats ADD COLUMN accepted_guarantee VARCHAR(24) NULL;
