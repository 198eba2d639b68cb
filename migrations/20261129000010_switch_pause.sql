-- PAUSED: a transient mode used only inside the guided exit from DB mode. While Redis stock
-- and per-user counts are rebuilt from the DB, no path may sell (a DB-path sale made during
-- the rebuild would be missing from the rebuilt Redis stock), so engines answer "retry
-- shortly" for the few hundred milliseconds it takes. New values go at the end of each
-- ENUM, which both MariaDB and MySQL 8 apply in place.
ALTER TABLE switch_changes MODIFY COLUMN mode ENUM ('NORMAL', 'DEGRADED', 'PAUSED') NOT NULL;
ALTER TABLE degrade_switch MODIFY COLUMN mode ENUM ('NORMAL', 'DEGRADED', 'PAUSED') NOT NULL;
ALTER TABLE engine_heartbeats
    MODIFY COLUMN effective_mode ENUM ('NORMAL', 'DEGRADED', 'PAUSED') NOT NULL DEFAULT 'NORMAL';
-- The breaker's latch: the switch revision the engine had applied when its breaker tripped.
ALTER TABLE engine_heartbeats ADD COLUMN breaker_tripped_at DATETIME(3) NULL;
