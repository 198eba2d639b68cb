-- Four eyes, round 3 (issue 48), the last parts of findings 4 and 5: a facilitator's account
-- writes the ledger of drill rigs' products only, and an approver's account takes no step but a
-- note (its verdicts go through `compensation_verdicts`, whose trigger writes their steps).
--
-- Who is a facilitator or an approver. A trigger knows the client only by `USER()` (the idiom of
-- migrations 017, 018, 022 and 030): it runs in its definer's security context, where
-- `CURRENT_USER()`, `CURRENT_ROLE()` and `information_schema.ENABLED_ROLES` are the definer's.
-- The role is therefore looked up, by the user name, in `sale_role_accounts`: for each of the
-- five roles, the accounts `stockguard roles apply` last gave it. Ways tried and left:
--   - the server's grant tables (`mysql.roles_mapping` on MariaDB, `mysql.role_edges` on
--     MySQL 8). On MariaDB they are Aria tables, locked for the whole statement that reads them
--     from a trigger; a GRANT waiting for that lock queues every later reader behind it. A
--     sale's write that holds the read lock while it waits for a row another transaction holds,
--     and that transaction's next write queued behind a GRANT, wait on each other where InnoDB
--     cannot see it: both stall until `innodb_lock_wait_timeout` (50 s) and one fails. Any
--     `roles apply` (or any GRANT on the server) during a sale would do it; a test reproduced
--     it. They would also cost each order row of the sale a read of them (its bulk insert took
--     twice as long), and need the schema's owner to read the `mysql` schema;
--   - `CURRENT_ROLE()` and the account's privileges: the definer's, inside a trigger;
--   - a naming convention of accounts: the roles file names accounts freely.
-- The table is filled from the server's own record of each `roles apply`: its audit row (action
-- `roles.apply`, outcome `APPLIED`, target this database), whose `actor` is the server's word
-- (migration 018) and whose `details.persons` name each person's role and MySQL account. Such a
-- row counts only when its actor holds none of the sale's roles here: applying roles takes an
-- account that may create users and grant (root, a DBA), never a role's account, so a role's
-- account cannot write itself out of its role with an audit row of that shape (every role may
-- insert audit rows). Rows already in the audit log are replayed below, oldest first.
--
-- What this does not see: a role granted by hand, outside `roles apply` (the roles file is the
-- way roles are given); and an account outside the five roles that may insert audit rows (an
-- engine's account with every right on the database) could write such a row, but it may drop
-- the triggers anyway. docs/contract.md says so.
--
-- Cost and locks: the account is asked first, by a read of one row of `sale_role_accounts` by
-- key (about what the trigger's read of a product costs; the grant tables cost an order row
-- several times that), and the product's rig is read only for a facilitator's rows. Inside an
-- INSERT or UPDATE a read is a locking read (InnoDB takes a shared lock on the row): the sale's
-- engines, relays, closers and executors take no lock on `inventory` they did not take before.
-- The registry's row is locked exclusively only while an apply is recorded: that waits for the
-- sale's writes in flight, InnoDB sees every wait, and should it pick the apply's audit row as a
-- deadlock's victim, `roles apply` fails recording it and is run again (it is idempotent).
--
-- MariaDB 10.11 and MySQL 8 (`JSON_TABLE`, several triggers per event with `FOLLOWS`).

CREATE TABLE sale_role_accounts (
    role  VARCHAR(16) NOT NULL,
    -- A JSON array of MySQL user names.
    users JSON        NOT NULL,
    PRIMARY KEY (role)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- One row per role, always there: a lookup of a missing key would lock a gap.
INSERT INTO sale_role_accounts (role, users)
VALUES ('viewer', '[]'), ('oncall', '[]'), ('approver', '[]'), ('facilitator', '[]'), ('admin', '[]');

-- Each role's accounts after an apply: those this apply does not name, and those it gives the
-- role (a person moved to another role leaves the old one).
CREATE PROCEDURE sale_role_accounts_record(IN p_details LONGTEXT)
    MODIFIES SQL DATA
BEGIN
    DECLARE v_n INT DEFAULT 1;
    DECLARE v_role VARCHAR(16);
    DECLARE v_users LONGTEXT;
    WHILE v_n <= 5 DO
        SET v_role = ELT(v_n, 'viewer', 'oncall', 'approver', 'facilitator', 'admin');
        SELECT users INTO v_users FROM sale_role_accounts WHERE role = v_role FOR UPDATE;
        UPDATE sale_role_accounts SET users = COALESCE((
            SELECT JSON_ARRAYAGG(k.u) FROM (
                SELECT o.u FROM JSON_TABLE(v_users, '$[*]' COLUMNS (u VARCHAR(128) PATH '$')) AS o
                WHERE o.u IS NOT NULL AND o.u NOT IN (
                    SELECT p.u FROM JSON_TABLE(p_details, '$.persons[*]'
                        COLUMNS (u VARCHAR(128) PATH '$.mysql.user')) AS p
                    WHERE p.u IS NOT NULL)
                UNION
                SELECT p.u FROM JSON_TABLE(p_details, '$.persons[*]'
                    COLUMNS (u VARCHAR(128) PATH '$.mysql.user', r VARCHAR(16) PATH '$.role')) AS p
                WHERE p.u IS NOT NULL AND CAST(p.r AS BINARY) = CAST(v_role AS BINARY)) AS k), '[]')
            WHERE role = v_role;
        SET v_n = v_n + 1;
    END WHILE;
END;

-- Migration 030's trigger, its rules kept, and the record of an apply (a BEFORE trigger, so
-- the audit log keeps its three triggers; a refusal undoes both).
DROP TRIGGER audit_log_actor_from_server;
CREATE TRIGGER audit_log_actor_from_server BEFORE INSERT ON audit_log FOR EACH ROW
BEGIN
    SET NEW.claimed_actor = NEW.actor, NEW.actor = SUBSTRING_INDEX(USER(), '@', 1);
    IF NEW.role <=> 'db' AND NOT EXISTS (
        SELECT 1 FROM compensation_steps s
        WHERE s.id = JSON_UNQUOTE(JSON_EXTRACT(NEW.details, '$.step_id'))
          AND s.case_id = JSON_UNQUOTE(JSON_EXTRACT(NEW.details, '$.case_id'))
          AND NEW.action = CONCAT('compensation.', LOWER(s.step)) AND s.actor = NEW.actor) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'audit: a row of role db is the workflow''s own record of a step';
    END IF;
    IF NEW.action <=> 'roles.apply' AND NEW.outcome <=> 'APPLIED' THEN
        IF NEW.target <=> DATABASE() AND NEW.details IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM sale_role_accounts WHERE JSON_CONTAINS(users, JSON_QUOTE(NEW.actor))) THEN
            CALL sale_role_accounts_record(NEW.details);
        END IF;
    END IF;
END;

-- The applies already recorded, oldest first, by the same rule.
CREATE PROCEDURE sale_role_accounts_replay()
    MODIFIES SQL DATA
BEGIN
    DECLARE v_done BOOLEAN DEFAULT FALSE;
    DECLARE v_actor VARCHAR(128);
    DECLARE v_details LONGTEXT;
    DECLARE applies CURSOR FOR
        SELECT actor, details FROM audit_log
        WHERE action = 'roles.apply' AND outcome = 'APPLIED' AND target = DATABASE() AND details IS NOT NULL
        ORDER BY id;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = TRUE;
    OPEN applies;
    replay: LOOP
        FETCH applies INTO v_actor, v_details;
        IF v_done THEN
            LEAVE replay;
        END IF;
        IF NOT EXISTS (SELECT 1 FROM sale_role_accounts WHERE JSON_CONTAINS(users, JSON_QUOTE(v_actor))) THEN
            CALL sale_role_accounts_record(v_details);
        END IF;
    END LOOP;
    CLOSE applies;
END;

CALL sale_role_accounts_replay();
DROP PROCEDURE sale_role_accounts_replay;

-- Finding 4: the facilitator (the drill role) inserted paid orders on any product at a price it
-- picked, which a case then refunded. A drill's products are its rig's (`inventory.rig`: the
-- drill run that put them on sale). A facilitator's account, and the drill engines the runner
-- starts with the same credentials, write the ledger of rigs' products only: it puts a product
-- on sale only as a rig's, changes no product of the sale, never moves a product into or out of
-- a rig (nor from one rig to another), and every order, outbox row or failure it writes or
-- changes is of a rig's product. A product that is not on sale (or NULL, in a loose session) is
-- no rig's. It has no DELETE on these tables. The switch and rewrite runs stay its own to write
-- for the sale (`Action::ChangeSwitch`, `Action::RewriteStock`): they rebuild Redis from the
-- ledger and write no order, stock or price.
CREATE TRIGGER inventory_rig_confined_insert BEFORE INSERT ON inventory FOR EACH ROW
BEGIN
    IF NEW.rig IS NULL THEN
        IF JSON_CONTAINS((SELECT users FROM sale_role_accounts WHERE role = 'facilitator'),
                         JSON_QUOTE(SUBSTRING_INDEX(USER(), '@', 1))) THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'drills: a facilitator puts a product on sale only as a drill rig''s';
        END IF;
    END IF;
END;

CREATE TRIGGER inventory_rig_confined_update BEFORE UPDATE ON inventory FOR EACH ROW
BEGIN
    IF OLD.rig IS NULL OR NOT (NEW.rig <=> OLD.rig) THEN
        IF JSON_CONTAINS((SELECT users FROM sale_role_accounts WHERE role = 'facilitator'),
                         JSON_QUOTE(SUBSTRING_INDEX(USER(), '@', 1))) THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'drills: a facilitator changes only drill rigs'' products, and never moves a product into or out of a rig';
        END IF;
    END IF;
END;

CREATE TRIGGER orders_rig_confined_insert BEFORE INSERT ON orders FOR EACH ROW
BEGIN
    IF JSON_CONTAINS((SELECT users FROM sale_role_accounts WHERE role = 'facilitator'),
                     JSON_QUOTE(SUBSTRING_INDEX(USER(), '@', 1))) THEN
        IF (SELECT rig FROM inventory WHERE product_id = NEW.product_id) IS NULL THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'drills: a facilitator writes orders of drill rigs'' products only';
        END IF;
    END IF;
END;

-- An order's product is fixed (`orders_fixed`); NEW's is read too, in case that rule moves.
CREATE TRIGGER orders_rig_confined_update BEFORE UPDATE ON orders FOR EACH ROW
BEGIN
    IF JSON_CONTAINS((SELECT users FROM sale_role_accounts WHERE role = 'facilitator'),
                     JSON_QUOTE(SUBSTRING_INDEX(USER(), '@', 1))) THEN
        IF (SELECT rig FROM inventory WHERE product_id = OLD.product_id) IS NULL
           OR (SELECT rig FROM inventory WHERE product_id = NEW.product_id) IS NULL THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'drills: a facilitator writes orders of drill rigs'' products only';
        END IF;
    END IF;
END;

CREATE TRIGGER outbox_rig_confined_insert BEFORE INSERT ON outbox FOR EACH ROW
BEGIN
    IF JSON_CONTAINS((SELECT users FROM sale_role_accounts WHERE role = 'facilitator'),
                     JSON_QUOTE(SUBSTRING_INDEX(USER(), '@', 1))) THEN
        IF (SELECT rig FROM inventory WHERE product_id = NEW.product_id) IS NULL THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'drills: a facilitator writes the outbox of drill rigs'' products only';
        END IF;
    END IF;
END;

CREATE TRIGGER outbox_rig_confined_update BEFORE UPDATE ON outbox FOR EACH ROW
BEGIN
    IF JSON_CONTAINS((SELECT users FROM sale_role_accounts WHERE role = 'facilitator'),
                     JSON_QUOTE(SUBSTRING_INDEX(USER(), '@', 1))) THEN
        IF (SELECT rig FROM inventory WHERE product_id = OLD.product_id) IS NULL
           OR (SELECT rig FROM inventory WHERE product_id = NEW.product_id) IS NULL THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'drills: a facilitator writes the outbox of drill rigs'' products only';
        END IF;
    END IF;
END;

CREATE TRIGGER order_failures_rig_confined_insert BEFORE INSERT ON order_failures FOR EACH ROW
BEGIN
    IF JSON_CONTAINS((SELECT users FROM sale_role_accounts WHERE role = 'facilitator'),
                     JSON_QUOTE(SUBSTRING_INDEX(USER(), '@', 1))) THEN
        IF (SELECT rig FROM inventory WHERE product_id = NEW.product_id) IS NULL THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'drills: a facilitator writes failures of drill rigs'' products only';
        END IF;
    END IF;
END;

-- Finding 5: an approver's account inserted PROPOSE and EXECUTE steps. An approver writes notes.
-- Its APPROVE or REJECT is a verdict, whose trigger (`compensation_verdicts_step`, migration
-- 017) writes the step in the approver's own session: such a step is let through while this
-- account has more verdicts of that kind on the case than steps of it (each verdict writes one
-- step; a step with no verdict of its own, a replay of an older round's, is refused). Every other
-- kind (OPEN, PROPOSE, EXECUTE, EXECUTED, CLOSE, and NULL or '' in a loose session) is refused.
-- After the workflow's own checks (`FOLLOWS`): a step the workflow refuses anyway is refused in
-- its words, and this rule speaks where it alone stands between an approver and the step (a
-- planned draft it would propose, an approved case it would execute, an executed one it would
-- close, any case it would open).
CREATE TRIGGER compensation_steps_approver_notes BEFORE INSERT ON compensation_steps FOR EACH ROW
FOLLOWS compensation_steps_check
BEGIN
    DECLARE v_actor VARCHAR(128) DEFAULT SUBSTRING_INDEX(USER(), '@', 1);
    IF NOT (NEW.step <=> 'NOTE') THEN
        IF JSON_CONTAINS((SELECT users FROM sale_role_accounts WHERE role = 'approver'), JSON_QUOTE(v_actor)) THEN
            IF NEW.step IS NULL OR NEW.step NOT IN ('APPROVE', 'REJECT')
               OR (SELECT COUNT(*) FROM compensation_verdicts
                   WHERE case_id = NEW.case_id AND actor = v_actor AND verdict = NEW.step)
                  <= (SELECT COUNT(*) FROM compensation_steps
                      WHERE case_id = NEW.case_id AND actor = v_actor AND step = NEW.step) THEN
                SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an approver''s steps are notes; a verdict is given in compensation_verdicts';
            END IF;
        END IF;
    END IF;
END;
