-- Oversell compensation, reshaped for the four-eyes workflow (issue 15). The first tables
-- (20261129000005) were never written by any code: they are replaced.
--
-- A case per product incident holds one line per affected order (the orders beyond stock,
-- and accepted orders withdrawn: `order_failures`). Its workflow is driven only by inserting
-- steps; triggers check each step against the case and move the case's status, so the rules
-- hold for raw SQL too:
--   DRAFT --PROPOSE (maker)--> PROPOSED --APPROVE (checkers, never the maker)--> APPROVED
--         <--REJECT (a checker, with a reason)--
--   (a checker's APPROVE or REJECT is a row in `compensation_verdicts`, which writes the step)
--   APPROVED --EXECUTE (neither maker nor checker)--> EXECUTING --EXECUTED--> EXECUTED --CLOSE--> CLOSED
-- Who took a step is the server's word: `USER()`'s user name, set by the trigger. (Inside a
-- trigger `CURRENT_USER()` is the trigger's definer, not the client; `USER()` is the client's
-- session.) Accounts should therefore be one per person.
--
-- Nobody but the triggers changes a case row (its status, maker, approvals): the roles grant
-- INSERT on `compensation_cases`, never UPDATE, and the triggers update it with their
-- definer's rights. A case, a line and an event are born as the workflow allows (a draft, a
-- pending line of a draft, an event of an effect), whatever a raw INSERT says.
DROP TABLE compensation_actions;
DROP TABLE compensation_cases;

-- Above this plan total a proposal needs two distinct checkers.
CREATE TABLE compensation_settings (
    id                       TINYINT UNSIGNED NOT NULL,
    two_checkers_above_cents BIGINT           NOT NULL,
    PRIMARY KEY (id),
    CONSTRAINT ck_compensation_settings_one_row CHECK (id = 1)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

INSERT INTO compensation_settings (id, two_checkers_above_cents) VALUES (1, 100000);

-- `open_product` makes opening idempotent: one case per product that is not closed.
CREATE TABLE compensation_cases (
    id               BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    product_id       BIGINT UNSIGNED NOT NULL,
    status           ENUM ('DRAFT', 'PROPOSED', 'APPROVED', 'EXECUTING', 'EXECUTED', 'CLOSED') NOT NULL DEFAULT 'DRAFT',
    opened_by        VARCHAR(128)    NOT NULL,
    opened_at        DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    maker            VARCHAR(128)    NULL,
    proposal_step    BIGINT UNSIGNED NULL,
    approvals_needed TINYINT UNSIGNED NOT NULL DEFAULT 1,
    updated_at       DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
    open_product     BIGINT UNSIGNED AS (IF(status = 'CLOSED', NULL, product_id)) STORED,
    PRIMARY KEY (id),
    UNIQUE KEY uk_compensation_open_product (open_product),
    KEY idx_compensation_status (status, opened_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- One line per affected order; its plan (action, amount) and, once executed, its outcome.
CREATE TABLE compensation_lines (
    id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    case_id        BIGINT UNSIGNED NOT NULL,
    order_no       VARCHAR(40)     NOT NULL,
    user_id        BIGINT UNSIGNED NOT NULL,
    qty            INT             NOT NULL,
    accepted_at    DATETIME(3)     NOT NULL,
    price_cents    BIGINT          NOT NULL,
    reason         ENUM ('OVERSOLD', 'WITHDRAWN') NOT NULL,
    action         ENUM ('FULFIL', 'CANCEL_REFUND', 'COUPON', 'NOTE') NULL,
    amount_cents   BIGINT          NOT NULL DEFAULT 0,
    note           VARCHAR(500)    NOT NULL DEFAULT '',
    outcome        ENUM ('PENDING', 'DONE', 'SKIPPED') NOT NULL DEFAULT 'PENDING',
    outcome_detail VARCHAR(500)    NOT NULL DEFAULT '',
    executed_by    VARCHAR(128)    NULL,
    executed_at    DATETIME(3)     NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uk_compensation_line (case_id, order_no),
    KEY idx_compensation_line_order (order_no),
    CONSTRAINT fk_compensation_lines_case FOREIGN KEY (case_id) REFERENCES compensation_cases (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- Every step taken on a case, with who (the server's word) and why.
CREATE TABLE compensation_steps (
    id      BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    case_id BIGINT UNSIGNED NOT NULL,
    step    ENUM ('OPEN', 'PROPOSE', 'APPROVE', 'REJECT', 'EXECUTE', 'EXECUTED', 'CLOSE', 'NOTE') NOT NULL,
    actor   VARCHAR(128)    NOT NULL DEFAULT '',
    reason  VARCHAR(1000)   NOT NULL DEFAULT '',
    at      DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    PRIMARY KEY (id),
    KEY idx_compensation_steps_case (case_id, id),
    CONSTRAINT fk_compensation_steps_case FOREIGN KEY (case_id) REFERENCES compensation_cases (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- A checker's verdict (APPROVE or REJECT) on the current proposal. Approving is writing here,
-- a table the roles grant to approvers only, so an on-call account that may propose and
-- execute cannot approve by writing a step: the step of a verdict is written by this table's
-- trigger, and the steps trigger refuses an APPROVE or REJECT with no verdict behind it.
CREATE TABLE compensation_verdicts (
    id      BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    case_id BIGINT UNSIGNED NOT NULL,
    verdict ENUM ('APPROVE', 'REJECT') NOT NULL,
    actor   VARCHAR(128)    NOT NULL DEFAULT '',
    reason  VARCHAR(1000)   NOT NULL DEFAULT '',
    at      DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    PRIMARY KEY (id),
    KEY idx_compensation_verdicts_case (case_id, id),
    CONSTRAINT fk_compensation_verdicts_case FOREIGN KEY (case_id) REFERENCES compensation_cases (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- Exactly once: a line's effect is one row here, keyed by (case, order, action), written in
-- the same transaction as the effect itself.
CREATE TABLE compensation_effects (
    case_id  BIGINT UNSIGNED NOT NULL,
    order_no VARCHAR(40)     NOT NULL,
    action   ENUM ('FULFIL', 'CANCEL_REFUND', 'COUPON', 'NOTE') NOT NULL,
    executor VARCHAR(128)    NOT NULL DEFAULT '',
    at       DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    PRIMARY KEY (case_id, order_no, action),
    CONSTRAINT fk_compensation_effects_case FOREIGN KEY (case_id) REFERENCES compensation_cases (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- `compensation.executed` events for the payment and coupon systems downstream, each with
-- its idempotency key; written in the effect's transaction (an outbox).
CREATE TABLE compensation_events (
    id              BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    idempotency_key VARCHAR(100)    NOT NULL,
    kind            VARCHAR(64)     NOT NULL,
    case_id         BIGINT UNSIGNED NOT NULL,
    order_no        VARCHAR(40)     NOT NULL,
    user_id         BIGINT UNSIGNED NOT NULL,
    action          VARCHAR(16)     NOT NULL,
    amount_cents    BIGINT          NOT NULL,
    status          ENUM ('PENDING', 'SENT') NOT NULL DEFAULT 'PENDING',
    created_at      DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    PRIMARY KEY (id),
    UNIQUE KEY uk_compensation_events_key (idempotency_key)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TRIGGER compensation_steps_check BEFORE INSERT ON compensation_steps FOR EACH ROW
BEGIN
    DECLARE v_status VARCHAR(16);
    DECLARE v_maker VARCHAR(128);
    DECLARE v_proposal BIGINT UNSIGNED;
    SET NEW.actor = SUBSTRING_INDEX(USER(), '@', 1);
    SELECT CAST(status AS CHAR), maker, proposal_step INTO v_status, v_maker, v_proposal
        FROM compensation_cases WHERE id = NEW.case_id FOR UPDATE;
    IF v_status IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: no such case';
    END IF;
    IF NEW.step = 'PROPOSE' THEN
        IF v_status <> 'DRAFT' THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: only a draft can be proposed';
        END IF;
        IF EXISTS (SELECT 1 FROM compensation_lines WHERE case_id = NEW.case_id AND action IS NULL) THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: every line needs an action before proposing';
        END IF;
    ELSEIF NEW.step IN ('APPROVE', 'REJECT') THEN
        IF NOT EXISTS (SELECT 1 FROM compensation_verdicts WHERE case_id = NEW.case_id AND actor = NEW.actor
                       AND verdict = NEW.step) THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a verdict is given in compensation_verdicts (approvers only)';
        END IF;
        IF v_status <> 'PROPOSED' THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: only a proposed case can be approved or rejected';
        END IF;
        IF NEW.actor = v_maker THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: the maker cannot approve or reject their own proposal';
        END IF;
        IF NEW.step = 'REJECT' AND CHAR_LENGTH(TRIM(NEW.reason)) = 0 THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a rejection needs a reason';
        END IF;
        IF EXISTS (SELECT 1 FROM compensation_steps WHERE case_id = NEW.case_id AND id > v_proposal
                   AND step = 'APPROVE' AND actor = NEW.actor) THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: this checker has already approved';
        END IF;
    ELSEIF NEW.step IN ('EXECUTE', 'EXECUTED') THEN
        IF NOT (v_status = 'APPROVED' OR v_status = 'EXECUTING') THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: only an approved case can be executed';
        END IF;
        IF NEW.actor = v_maker OR EXISTS (SELECT 1 FROM compensation_steps WHERE case_id = NEW.case_id
                   AND id > v_proposal AND step = 'APPROVE' AND actor = NEW.actor) THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: the maker and the checkers cannot execute';
        END IF;
        IF NEW.step = 'EXECUTED' AND EXISTS (SELECT 1 FROM compensation_lines
                   WHERE case_id = NEW.case_id AND outcome = 'PENDING') THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: lines are still pending';
        END IF;
    ELSEIF NEW.step = 'CLOSE' THEN
        IF NOT (v_status = 'EXECUTED' OR v_status = 'DRAFT') THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: only a draft or an executed case can be closed';
        END IF;
        IF CHAR_LENGTH(TRIM(NEW.reason)) = 0 THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: closing needs a reason';
        END IF;
    END IF;
END;

CREATE TRIGGER compensation_steps_apply AFTER INSERT ON compensation_steps FOR EACH ROW
BEGIN
    DECLARE v_total BIGINT;
    DECLARE v_above BIGINT;
    DECLARE v_needed INT;
    DECLARE v_approved INT;
    IF NEW.step = 'PROPOSE' THEN
        SELECT COALESCE(SUM(amount_cents), 0) INTO v_total FROM compensation_lines WHERE case_id = NEW.case_id;
        SELECT two_checkers_above_cents INTO v_above FROM compensation_settings WHERE id = 1;
        UPDATE compensation_cases SET status = 'PROPOSED', maker = NEW.actor, proposal_step = NEW.id,
            approvals_needed = IF(v_total > v_above, 2, 1) WHERE id = NEW.case_id;
    ELSEIF NEW.step = 'APPROVE' THEN
        SELECT approvals_needed INTO v_needed FROM compensation_cases WHERE id = NEW.case_id;
        SELECT COUNT(DISTINCT s.actor) INTO v_approved FROM compensation_steps s
            JOIN compensation_cases c ON c.id = s.case_id
            WHERE s.case_id = NEW.case_id AND s.step = 'APPROVE' AND s.id > c.proposal_step;
        IF v_approved >= v_needed THEN
            UPDATE compensation_cases SET status = 'APPROVED' WHERE id = NEW.case_id;
        END IF;
    ELSEIF NEW.step = 'REJECT' THEN
        UPDATE compensation_cases SET status = 'DRAFT' WHERE id = NEW.case_id;
    ELSEIF NEW.step = 'EXECUTE' THEN
        UPDATE compensation_cases SET status = 'EXECUTING' WHERE id = NEW.case_id;
    ELSEIF NEW.step = 'EXECUTED' THEN
        UPDATE compensation_cases SET status = 'EXECUTED' WHERE id = NEW.case_id;
    ELSEIF NEW.step = 'CLOSE' THEN
        UPDATE compensation_cases SET status = 'CLOSED' WHERE id = NEW.case_id;
    END IF;
END;

-- A plan changes only while the case is a draft; an outcome only while it is executing.
CREATE TRIGGER compensation_lines_check BEFORE UPDATE ON compensation_lines FOR EACH ROW
BEGIN
    DECLARE v_status VARCHAR(16);
    SELECT CAST(status AS CHAR) INTO v_status FROM compensation_cases WHERE id = NEW.case_id;
    IF (NOT (NEW.action <=> OLD.action) OR NEW.amount_cents <> OLD.amount_cents OR NEW.note <> OLD.note)
       AND v_status <> 'DRAFT' THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: the plan can change only while the case is a draft';
    END IF;
    IF NEW.outcome <> OLD.outcome THEN
        IF v_status <> 'EXECUTING' THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: outcomes are written only while executing';
        END IF;
        IF NOT EXISTS (SELECT 1 FROM compensation_effects WHERE case_id = NEW.case_id
                       AND order_no = NEW.order_no AND action = NEW.action) THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an outcome needs its effect row';
        END IF;
        SET NEW.executed_by = SUBSTRING_INDEX(USER(), '@', 1);
    END IF;
    IF NOT (NEW.reason <=> OLD.reason) OR NEW.qty <> OLD.qty OR NEW.order_no <> OLD.order_no
       OR NEW.price_cents <> OLD.price_cents OR NEW.case_id <> OLD.case_id THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a line''s order, quantity and price are fixed';
    END IF;
END;

-- An effect is written only by an executor (neither maker nor checker) of an executing case.
CREATE TRIGGER compensation_effects_check BEFORE INSERT ON compensation_effects FOR EACH ROW
BEGIN
    DECLARE v_status VARCHAR(16);
    DECLARE v_maker VARCHAR(128);
    DECLARE v_proposal BIGINT UNSIGNED;
    SET NEW.executor = SUBSTRING_INDEX(USER(), '@', 1);
    SELECT CAST(status AS CHAR), maker, proposal_step INTO v_status, v_maker, v_proposal
        FROM compensation_cases WHERE id = NEW.case_id;
    IF NOT (v_status <=> 'EXECUTING') THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: effects are written only while executing';
    END IF;
    IF NEW.executor = v_maker OR EXISTS (SELECT 1 FROM compensation_steps WHERE case_id = NEW.case_id
               AND id > v_proposal AND step = 'APPROVE' AND actor = NEW.executor) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: the maker and the checkers cannot execute';
    END IF;
END;

-- A case is born a draft, opened by whoever connects.
CREATE TRIGGER compensation_cases_born BEFORE INSERT ON compensation_cases FOR EACH ROW
BEGIN
    SET NEW.status = 'DRAFT', NEW.maker = NULL, NEW.proposal_step = NULL, NEW.approvals_needed = 1,
        NEW.opened_by = SUBSTRING_INDEX(USER(), '@', 1);
END;

-- A line is added only to a draft, pending.
CREATE TRIGGER compensation_lines_born BEFORE INSERT ON compensation_lines FOR EACH ROW
BEGIN
    IF NOT ((SELECT CAST(status AS CHAR) FROM compensation_cases WHERE id = NEW.case_id) <=> 'DRAFT') THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: lines are added only to a draft';
    END IF;
    SET NEW.outcome = 'PENDING', NEW.outcome_detail = '', NEW.executed_by = NULL, NEW.executed_at = NULL;
END;

-- An event only accompanies its effect (inserted first, in the same transaction).
CREATE TRIGGER compensation_events_born BEFORE INSERT ON compensation_events FOR EACH ROW
BEGIN
    IF NOT EXISTS (SELECT 1 FROM compensation_effects WHERE case_id = NEW.case_id AND order_no = NEW.order_no
                   AND action = NEW.action) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an event needs its effect row';
    END IF;
END;

-- A verdict is the checker's, as the server knows them, and becomes the case's step (which the
-- steps trigger checks and applies); a refusal there undoes the verdict too.
CREATE TRIGGER compensation_verdicts_born BEFORE INSERT ON compensation_verdicts FOR EACH ROW
    SET NEW.actor = SUBSTRING_INDEX(USER(), '@', 1);

CREATE TRIGGER compensation_verdicts_step AFTER INSERT ON compensation_verdicts FOR EACH ROW
    INSERT INTO compensation_steps (case_id, step, reason) VALUES (NEW.case_id, NEW.verdict, NEW.reason);
