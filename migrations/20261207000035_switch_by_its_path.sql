-- Issue 51, item 4: a switch row moves only through the switch's own path. A facilitator's
-- account (and any account with UPDATE on `degrade_switch`) put the whole sale in DB mode with
-- `UPDATE degrade_switch SET mode = 'DEGRADED' WHERE scope = 'global'`: the live sale engine
-- went DEGRADED with no `switch_changes` row, no audit row and the revision unchanged, so no
-- exit, acknowledgement or person could tell when, why or by whom.
--
-- The path (`crates/stockguard-core/src/switch/store.rs`, `write_change`), in one transaction:
-- lock the `switch_head` row, append the change to `switch_changes` (its id is the revision),
-- move the head to that revision, write the audit row (`degrade.switch`, whose details carry
-- the revision), then move the scope's row in `degrade_switch` to the change. The triggers
-- below hold every account to it, in a strict session and a loose one (`sql_mode = ''`, where a
-- NULL reaches a trigger as NULL and an ENUM value outside its list as ''; every comparison is
-- `<=>` or wrapped in COALESCE):
--   - a switch row is inserted or changed only to the change at the head: its revision is
--     `switch_head.revision`, a `switch_changes` row of that revision names the same scope,
--     mode, author, reason and time, and an audit row `degrade.switch` of that scope carries
--     that revision; a changed row's revision only grows and its scope is fixed;
--   - a switch row is never deleted (an absent row reads as NORMAL: a DELETE would lead a
--     scope out of DB mode with no change at all); it is set NORMAL through the path instead;
--   - the head moves only forward, to a change that is in `switch_changes` (so an old change
--     cannot be replayed at the head); `switch_changes` is append-only, and a change names a
--     scope the switch knows and a mode of its list.
-- Doing every step of the path by hand by raw SQL is the path: the change row, the revision and
-- the audit row (its actor the server's word, migration 018) are all there to read.
--
-- Cost: a switch change is a handful of rows per incident; the audit lookup reads one index
-- entry (the virtual column below). Engines only read `degrade_switch`; nothing here touches
-- their order path.
--
-- MariaDB 10.11 and MySQL 8.

-- The revision of a `degrade.switch` audit row, indexed, so the switch row's trigger finds its
-- audit row by one index lookup (the audit log grows for ever).
ALTER TABLE audit_log
    ADD COLUMN switch_revision BIGINT UNSIGNED
        AS (IF(action = 'degrade.switch', CAST(JSON_UNQUOTE(JSON_EXTRACT(details, '$.revision')) AS UNSIGNED), NULL))
        VIRTUAL,
    ADD KEY idx_audit_switch_revision (switch_revision);

CREATE TRIGGER switch_changes_known BEFORE INSERT ON switch_changes FOR EACH ROW
BEGIN
    IF NOT COALESCE(CAST(NEW.mode AS CHAR) IN ('NORMAL', 'DEGRADED', 'PAUSED'), FALSE)
       OR NOT COALESCE(NEW.scope = 'global' OR NEW.scope REGEXP '^(rig|product):[0-9]{1,20}$', FALSE) THEN
        SIGNAL SQLSTATE '45000'
            SET MESSAGE_TEXT = 'switch: a change names a scope (global, rig:<run>, product:<id>) and a mode (NORMAL, DEGRADED, PAUSED)';
    END IF;
END;

CREATE TRIGGER switch_changes_kept BEFORE UPDATE ON switch_changes FOR EACH ROW
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'switch: switch_changes is append-only';

CREATE TRIGGER switch_changes_kept_delete BEFORE DELETE ON switch_changes FOR EACH ROW
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'switch: switch_changes is append-only';

CREATE TRIGGER switch_head_forward BEFORE UPDATE ON switch_head FOR EACH ROW
BEGIN
    IF NOT (NEW.id <=> OLD.id)
       OR NOT COALESCE(NEW.revision > OLD.revision, FALSE)
       OR NOT EXISTS (SELECT 1 FROM switch_changes WHERE revision = NEW.revision) THEN
        SIGNAL SQLSTATE '45000'
            SET MESSAGE_TEXT = 'switch: the head moves only forward, to a change in switch_changes';
    END IF;
END;

-- The row `p_*` would be is the change at the head, audited.
CREATE PROCEDURE degrade_switch_is_the_head(
    IN p_scope VARCHAR(64), IN p_product BIGINT UNSIGNED, IN p_mode VARCHAR(16), IN p_revision BIGINT UNSIGNED,
    IN p_changed_by VARCHAR(128), IN p_reason VARCHAR(1000), IN p_changed_at DATETIME(3))
    READS SQL DATA
BEGIN
    IF NOT COALESCE(p_revision = (SELECT revision FROM switch_head WHERE id = 1), FALSE)
       OR NOT EXISTS (
            SELECT 1 FROM switch_changes c
            WHERE c.revision = p_revision AND c.scope <=> p_scope AND CAST(c.mode AS CHAR) <=> p_mode
              AND c.changed_by <=> p_changed_by AND c.reason <=> p_reason AND c.changed_at <=> p_changed_at)
       OR NOT EXISTS (
            SELECT 1 FROM audit_log a
            WHERE a.switch_revision = p_revision AND a.action = 'degrade.switch' AND a.target <=> p_scope)
       OR NOT (p_product <=> IF(p_scope LIKE 'product:%', CAST(SUBSTRING(p_scope, 9) AS UNSIGNED), NULL)) THEN
        SIGNAL SQLSTATE '45000'
            SET MESSAGE_TEXT = 'switch: a switch row moves only through the switch: a switch_changes row, its revision at the head, its audit row';
    END IF;
END;

CREATE TRIGGER degrade_switch_by_its_path_insert BEFORE INSERT ON degrade_switch FOR EACH ROW
    CALL degrade_switch_is_the_head(NEW.scope, NEW.product_id, CAST(NEW.mode AS CHAR), NEW.revision,
                                    NEW.changed_by, NEW.reason, NEW.changed_at);

-- An upsert whose row is already newer leaves it as it is (the path's own guard): no change.
CREATE TRIGGER degrade_switch_by_its_path_update BEFORE UPDATE ON degrade_switch FOR EACH ROW
BEGIN
    IF NOT (NEW.scope <=> OLD.scope AND NEW.product_id <=> OLD.product_id AND NEW.mode <=> OLD.mode
            AND NEW.revision <=> OLD.revision AND NEW.changed_by <=> OLD.changed_by
            AND NEW.reason <=> OLD.reason AND NEW.changed_at <=> OLD.changed_at) THEN
        IF NOT (NEW.scope <=> OLD.scope) OR NOT COALESCE(NEW.revision > OLD.revision, FALSE) THEN
            SIGNAL SQLSTATE '45000'
                SET MESSAGE_TEXT = 'switch: a switch row moves only through the switch: a switch_changes row, its revision at the head, its audit row';
        END IF;
        CALL degrade_switch_is_the_head(NEW.scope, NEW.product_id, CAST(NEW.mode AS CHAR), NEW.revision,
                                        NEW.changed_by, NEW.reason, NEW.changed_at);
    END IF;
END;

CREATE TRIGGER degrade_switch_kept BEFORE DELETE ON degrade_switch FOR EACH ROW
    SIGNAL SQLSTATE '45000'
        SET MESSAGE_TEXT = 'switch: a switch row is never deleted (an absent row reads NORMAL): set it NORMAL with stockguard degrade off';
