-- Four eyes against the accounts it separates (issue 25). Migration 017 let the people the
-- workflow keeps apart write around it with their own accounts: a maker changed a line's buyer
-- after approval, on-call wrote refund events by hand, a negative line hid a refund from the
-- second checker, a draft took lines of any order, one person closed a case for good, unpaid
-- orders were refunded, and an executor recorded effects that never happened. From here:
--
-- * An order's number, buyer, product, quantity, price and time are fixed once it is written,
--   and its price is the product's price when it was sold (`orders.price_cents`, set by the
--   server; the same for `order_failures`).
-- * A line is born from its order: the trigger takes buyer, quantity, time and price from the
--   order of the case's product (or the withdrawn acceptance), whatever the INSERT says, and
--   refuses an order of another product, of none, or one in another case already.
-- * A plan's amounts are never negative, a refund is the order's price times its quantity, a
--   coupon lies between 1 cent and 10,000,000.00; who planned a line is the server's word
--   (`compensation_cases.planners`), and a planner can neither approve nor execute the plan.
-- * An effect row *is* the execution of its line: its trigger rechecks the ledger (the order
--   still live and still among the last accepted orders beyond stock, inventory locked before
--   orders as every path does), performs the effect, and records what happened; the line's
--   outcome and the refund or coupon event (`compensation_events`) are born from it alone,
--   with the order's own buyer and the approved amount, once. No role may write an event.
--   An unpaid order is cancelled, never refunded.
-- * A unit the DB owes (stock below zero) never goes back to Redis: a cancel releases to
--   Redis only what it brings stock above zero (the engine's closer keeps the same rule).
-- * A draft with lines is not closed by one person: its plan goes through the four eyes.
-- * Every step leaves an audit row, written here, so raw SQL leaves one too.

-- The price an order was sold at.
ALTER TABLE orders ADD COLUMN price_cents BIGINT NULL AFTER buy_count;
UPDATE orders o JOIN inventory i ON i.product_id = o.product_id SET o.price_cents = i.price_cents;
ALTER TABLE order_failures ADD COLUMN price_cents BIGINT NULL AFTER qty;
UPDATE order_failures f JOIN inventory i ON i.product_id = f.product_id SET f.price_cents = i.price_cents;

CREATE TRIGGER orders_priced BEFORE INSERT ON orders FOR EACH ROW
    SET NEW.price_cents = COALESCE((SELECT price_cents FROM inventory WHERE product_id = NEW.product_id), 0);

CREATE TRIGGER orders_fixed BEFORE UPDATE ON orders FOR EACH ROW
BEGIN
    IF NEW.order_no <> OLD.order_no OR NEW.user_id <> OLD.user_id OR NEW.product_id <> OLD.product_id
       OR NEW.buy_count <> OLD.buy_count OR NOT (NEW.price_cents <=> OLD.price_cents)
       OR NEW.created_at <> OLD.created_at THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'orders: an order''s number, buyer, product, quantity, price and time are fixed';
    END IF;
END;

CREATE TRIGGER order_failures_priced BEFORE INSERT ON order_failures FOR EACH ROW
    SET NEW.price_cents = COALESCE((SELECT price_cents FROM inventory WHERE product_id = NEW.product_id), 0);

CREATE TRIGGER order_failures_fixed BEFORE UPDATE ON order_failures FOR EACH ROW
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'orders: a withdrawn acceptance is fixed';

-- Who approved the current proposal, on the case row itself (read under the row's lock).
ALTER TABLE compensation_cases ADD COLUMN approvers TEXT NULL AFTER approvals_needed;
UPDATE compensation_cases c SET approvers = (SELECT JSON_ARRAYAGG(s.actor) FROM compensation_steps s
    WHERE s.case_id = c.id AND s.step = 'APPROVE' AND s.id > c.proposal_step)
    WHERE c.status = 'PROPOSED';

-- Everyone who planned any line of a case (the server's word), on the case row: read there,
-- not by scanning the lines, whose rows stay free for execution.
ALTER TABLE compensation_cases ADD COLUMN planners TEXT NULL AFTER approvers;

-- What an effect did: its outcome and detail, the buyer (from the order) and the event's amount
-- (NULL: no event).
ALTER TABLE compensation_effects
    ADD COLUMN outcome     ENUM ('DONE', 'SKIPPED') NOT NULL DEFAULT 'DONE' AFTER action,
    ADD COLUMN detail      VARCHAR(500)    NOT NULL DEFAULT '' AFTER outcome,
    ADD COLUMN user_id     BIGINT UNSIGNED NULL AFTER detail,
    ADD COLUMN event_cents BIGINT          NULL AFTER user_id;

-- One event per effect.
ALTER TABLE compensation_events ADD UNIQUE KEY uk_compensation_events_effect (case_id, order_no, action);

DROP TRIGGER compensation_steps_check;
DROP TRIGGER compensation_steps_apply;
DROP TRIGGER compensation_lines_check;
DROP TRIGGER compensation_effects_check;
DROP TRIGGER compensation_cases_born;
DROP TRIGGER compensation_lines_born;
DROP TRIGGER compensation_events_born;

-- A case is born a draft of a product on sale, opened by whoever connects.
CREATE TRIGGER compensation_cases_born BEFORE INSERT ON compensation_cases FOR EACH ROW
BEGIN
    IF NOT EXISTS (SELECT 1 FROM inventory WHERE product_id = NEW.product_id) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a case is opened for a product on sale';
    END IF;
    SET NEW.status = 'DRAFT', NEW.maker = NULL, NEW.proposal_step = NULL, NEW.approvals_needed = 1,
        NEW.opened_by = SUBSTRING_INDEX(USER(), '@', 1);
END;

CREATE TRIGGER compensation_steps_check BEFORE INSERT ON compensation_steps FOR EACH ROW
BEGIN
    DECLARE v_status VARCHAR(16);
    DECLARE v_maker VARCHAR(128);
    DECLARE v_proposal BIGINT UNSIGNED;
    DECLARE v_approvers TEXT;
    DECLARE v_planners TEXT;
    SET NEW.actor = SUBSTRING_INDEX(USER(), '@', 1);
    SELECT CAST(status AS CHAR), maker, proposal_step, approvers, planners
        INTO v_status, v_maker, v_proposal, v_approvers, v_planners
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
        IF JSON_CONTAINS(COALESCE(v_planners, JSON_ARRAY()), JSON_QUOTE(NEW.actor)) THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: who planned a line cannot approve or reject the plan';
        END IF;
        IF NEW.step = 'REJECT' AND CHAR_LENGTH(TRIM(NEW.reason)) = 0 THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a rejection needs a reason';
        END IF;
        -- From the case row, read locked above: the latest approvals, never an older snapshot.
        IF NEW.step = 'APPROVE' AND JSON_CONTAINS(COALESCE(v_approvers, JSON_ARRAY()), JSON_QUOTE(NEW.actor)) THEN
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
        IF JSON_CONTAINS(COALESCE(v_planners, JSON_ARRAY()), JSON_QUOTE(NEW.actor)) THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: who planned a line cannot execute the plan';
        END IF;
        IF NEW.step = 'EXECUTED' AND EXISTS (SELECT 1 FROM compensation_lines
                   WHERE case_id = NEW.case_id AND outcome = 'PENDING') THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: lines are still pending';
        END IF;
    ELSEIF NEW.step = 'CLOSE' THEN
        IF NOT (v_status = 'EXECUTED' OR v_status = 'DRAFT') THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: only a draft or an executed case can be closed';
        END IF;
        IF v_status = 'DRAFT' AND EXISTS (SELECT 1 FROM compensation_lines WHERE case_id = NEW.case_id) THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a draft with lines is closed through its plan: propose it (notes, if nothing is owed) for a checker to approve';
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
    DECLARE v_product BIGINT UNSIGNED;
    IF NEW.step = 'PROPOSE' THEN
        SELECT COALESCE(SUM(amount_cents), 0) INTO v_total FROM compensation_lines WHERE case_id = NEW.case_id;
        SELECT two_checkers_above_cents INTO v_above FROM compensation_settings WHERE id = 1;
        UPDATE compensation_cases SET status = 'PROPOSED', maker = NEW.actor, proposal_step = NEW.id, approvers = NULL,
            approvals_needed = IF(v_total > v_above, 2, 1) WHERE id = NEW.case_id;
    ELSEIF NEW.step = 'APPROVE' THEN
        -- An UPDATE works on the row's latest version: two checkers in two transactions (one
        -- of them in an older snapshot) both count. `status` first, from the old approvers.
        UPDATE compensation_cases
            SET status = IF(COALESCE(JSON_LENGTH(approvers), 0) + 1 >= approvals_needed, 'APPROVED', status),
                approvers = JSON_ARRAY_APPEND(COALESCE(approvers, JSON_ARRAY()), '$', NEW.actor)
            WHERE id = NEW.case_id;
    ELSEIF NEW.step = 'REJECT' THEN
        UPDATE compensation_cases SET status = 'DRAFT' WHERE id = NEW.case_id;
    ELSEIF NEW.step = 'EXECUTE' THEN
        UPDATE compensation_cases SET status = 'EXECUTING' WHERE id = NEW.case_id;
    ELSEIF NEW.step = 'EXECUTED' THEN
        UPDATE compensation_cases SET status = 'EXECUTED' WHERE id = NEW.case_id;
    ELSEIF NEW.step = 'CLOSE' THEN
        UPDATE compensation_cases SET status = 'CLOSED' WHERE id = NEW.case_id;
    END IF;
    -- Every step is audited (the audit trigger sets the actor from the server).
    SELECT product_id INTO v_product FROM compensation_cases WHERE id = NEW.case_id;
    INSERT INTO audit_log (actor, role, environment, action, target, reason, outcome, details)
        VALUES ('', 'db', '', CONCAT('compensation.', LOWER(NEW.step)), CONCAT('case:', NEW.case_id), NEW.reason,
                'RECORDED', JSON_OBJECT('case_id', NEW.case_id, 'step_id', NEW.id, 'product_id', v_product));
END;

-- A line is born from its order, in a draft of that order's product.
CREATE TRIGGER compensation_lines_born BEFORE INSERT ON compensation_lines FOR EACH ROW
BEGIN
    DECLARE v_status VARCHAR(16);
    DECLARE v_product BIGINT UNSIGNED;
    DECLARE o_product BIGINT UNSIGNED;
    DECLARE o_user BIGINT UNSIGNED;
    DECLARE o_qty INT;
    DECLARE o_at DATETIME(3);
    DECLARE o_price BIGINT;
    SELECT CAST(status AS CHAR), product_id INTO v_status, v_product FROM compensation_cases WHERE id = NEW.case_id;
    IF NOT (v_status <=> 'DRAFT') THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: lines are added only to a draft';
    END IF;
    IF NEW.reason = 'OVERSOLD' THEN
        SELECT product_id, user_id, buy_count, created_at, price_cents INTO o_product, o_user, o_qty, o_at, o_price
            FROM orders WHERE order_no = NEW.order_no;
    ELSE
        SELECT product_id, user_id, qty, created_at, price_cents INTO o_product, o_user, o_qty, o_at, o_price
            FROM order_failures WHERE order_no = NEW.order_no;
    END IF;
    IF o_product IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a line is an order of the case (an oversold order, or a withdrawn acceptance), and there is no such order';
    END IF;
    IF o_product <> v_product THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a line is an order of the case''s product';
    END IF;
    IF EXISTS (SELECT 1 FROM compensation_lines l JOIN compensation_cases c ON c.id = l.case_id
               WHERE l.order_no = NEW.order_no AND (c.status <> 'CLOSED' OR l.outcome = 'DONE')) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: the order is in a case already (open, or compensated)';
    END IF;
    SET NEW.user_id = o_user, NEW.qty = o_qty, NEW.accepted_at = o_at, NEW.price_cents = COALESCE(o_price, 0),
        NEW.action = NULL, NEW.amount_cents = 0, NEW.note = '',
        NEW.outcome = 'PENDING', NEW.outcome_detail = '', NEW.executed_by = NULL, NEW.executed_at = NULL;
END;

-- The order, buyer, quantity, time and price of a line are fixed; its plan changes only while
-- the case is a draft, within the rules; its outcome is its effect's, written once.
CREATE TRIGGER compensation_lines_check BEFORE UPDATE ON compensation_lines FOR EACH ROW
BEGIN
    DECLARE v_status VARCHAR(16);
    DECLARE e_outcome VARCHAR(16);
    DECLARE e_detail VARCHAR(500);
    DECLARE e_executor VARCHAR(128);
    DECLARE e_at DATETIME(3);
    DECLARE v_planner VARCHAR(128);
    SELECT CAST(status AS CHAR) INTO v_status FROM compensation_cases WHERE id = OLD.case_id;
    IF NEW.case_id <> OLD.case_id OR NEW.order_no <> OLD.order_no OR NEW.user_id <> OLD.user_id
       OR NEW.qty <> OLD.qty OR NEW.accepted_at <> OLD.accepted_at OR NEW.price_cents <> OLD.price_cents
       OR NOT (NEW.reason <=> OLD.reason) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a line''s order, buyer, quantity, time and price are fixed';
    END IF;
    IF NOT (NEW.action <=> OLD.action) OR NEW.amount_cents <> OLD.amount_cents OR NEW.note <> OLD.note THEN
        IF v_status <> 'DRAFT' THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: the plan can change only while the case is a draft';
        END IF;
        IF NEW.amount_cents < 0 THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an amount is never negative';
        END IF;
        IF NEW.reason = 'WITHDRAWN' AND NEW.action IN ('FULFIL', 'CANCEL_REFUND') THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a withdrawn acceptance gets a coupon or a note';
        END IF;
        IF NEW.action = 'CANCEL_REFUND' AND NEW.amount_cents <> NEW.price_cents * NEW.qty THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a refund is the order''s price times its quantity';
        END IF;
        IF NEW.action = 'COUPON' AND (NEW.amount_cents < 1 OR NEW.amount_cents > 1000000000) THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a coupon is between 0.01 and 10000000.00';
        END IF;
        IF (NEW.action IS NULL OR NEW.action IN ('FULFIL', 'NOTE')) AND NEW.amount_cents <> 0 THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: only a refund or a coupon has an amount';
        END IF;
        SET v_planner = SUBSTRING_INDEX(USER(), '@', 1);
        UPDATE compensation_cases SET planners = JSON_ARRAY_APPEND(COALESCE(planners, JSON_ARRAY()), '$', v_planner)
            WHERE id = OLD.case_id AND NOT JSON_CONTAINS(COALESCE(planners, JSON_ARRAY()), JSON_QUOTE(v_planner));
    END IF;
    IF NEW.outcome <> OLD.outcome THEN
        IF OLD.outcome <> 'PENDING' THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an outcome is written once';
        END IF;
        IF v_status <> 'EXECUTING' THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: outcomes are written only while executing';
        END IF;
        SELECT CAST(outcome AS CHAR), detail, executor, at INTO e_outcome, e_detail, e_executor, e_at
            FROM compensation_effects WHERE case_id = OLD.case_id AND order_no = OLD.order_no AND action = OLD.action;
        IF e_outcome IS NULL OR e_outcome <> NEW.outcome THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an outcome is its effect''s';
        END IF;
        SET NEW.outcome_detail = e_detail, NEW.executed_by = e_executor, NEW.executed_at = e_at;
    ELSEIF NOT (NEW.outcome_detail <=> OLD.outcome_detail) OR NOT (NEW.executed_by <=> OLD.executed_by)
           OR NOT (NEW.executed_at <=> OLD.executed_at) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an outcome''s detail, executor and time are its effect''s';
    END IF;
END;

-- An effect row is its line's execution: written by an executor (neither maker, checker nor
-- planner) of an executing case, for the line's planned action, while the line is pending. It
-- locks the product's inventory before the order (the lock order of every path), rechecks the
-- ledger, performs the effect and records it; what the INSERT says of the outcome, the buyer
-- or the amount is overwritten.
CREATE TRIGGER compensation_effects_check BEFORE INSERT ON compensation_effects FOR EACH ROW
BEGIN
    DECLARE v_status VARCHAR(16);
    DECLARE v_maker VARCHAR(128);
    DECLARE v_proposal BIGINT UNSIGNED;
    DECLARE v_product BIGINT UNSIGNED;
    DECLARE v_initial BIGINT;
    DECLARE v_stock BIGINT;
    DECLARE v_live BIGINT;
    DECLARE v_newer BIGINT;
    DECLARE v_release BIGINT;
    DECLARE l_reason VARCHAR(16);
    DECLARE l_same_action BOOLEAN;
    DECLARE l_amount BIGINT;
    DECLARE l_outcome VARCHAR(16);
    DECLARE l_user BIGINT UNSIGNED;
    DECLARE o_id BIGINT UNSIGNED;
    DECLARE o_status VARCHAR(16);
    DECLARE o_qty INT;
    DECLARE v_planners TEXT;
    SET NEW.executor = SUBSTRING_INDEX(USER(), '@', 1), NEW.event_cents = NULL, NEW.detail = '';
    SELECT CAST(status AS CHAR), maker, proposal_step, product_id, planners
        INTO v_status, v_maker, v_proposal, v_product, v_planners
        FROM compensation_cases WHERE id = NEW.case_id;
    IF NOT (v_status <=> 'EXECUTING') THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: effects are written only while executing';
    END IF;
    IF NEW.executor = v_maker OR EXISTS (SELECT 1 FROM compensation_steps WHERE case_id = NEW.case_id
               AND id > v_proposal AND step = 'APPROVE' AND actor = NEW.executor) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: the maker and the checkers cannot execute';
    END IF;
    IF JSON_CONTAINS(COALESCE(v_planners, JSON_ARRAY()), JSON_QUOTE(NEW.executor)) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: who planned a line cannot execute the plan';
    END IF;
    -- Inventory first, then the line and the order.
    SELECT initial_stock, stock INTO v_initial, v_stock FROM inventory WHERE product_id = v_product FOR UPDATE;
    SELECT CAST(reason AS CHAR), action <=> NEW.action, amount_cents, CAST(outcome AS CHAR), user_id
        INTO l_reason, l_same_action, l_amount, l_outcome, l_user
        FROM compensation_lines WHERE case_id = NEW.case_id AND order_no = NEW.order_no FOR UPDATE;
    IF l_reason IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an effect is of a line of the case';
    END IF;
    IF NOT l_same_action THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an effect is the line''s approved action';
    END IF;
    IF l_outcome <> 'PENDING' THEN
        -- Its own state: a second executor, or a retry, finds the line done (not an error).
        SIGNAL SQLSTATE '45001' SET MESSAGE_TEXT = 'compensation: the line is executed already';
    END IF;
    SET NEW.user_id = l_user, NEW.outcome = 'DONE';
    IF l_reason = 'OVERSOLD' THEN
        SELECT id, CAST(status AS CHAR), buy_count, user_id INTO o_id, o_status, o_qty, l_user
            FROM orders WHERE order_no = NEW.order_no FOR UPDATE;
        SET NEW.user_id = l_user;
        -- The latest live orders (a locking read), not an older snapshot.
        SELECT COALESCE(SUM(buy_count), 0) INTO v_live FROM orders
            WHERE product_id = v_product AND status IN ('WAIT_PAY', 'PAID') LOCK IN SHARE MODE;
        SELECT COALESCE(SUM(buy_count), 0) INTO v_newer FROM orders
            WHERE product_id = v_product AND status IN ('WAIT_PAY', 'PAID') AND id > o_id LOCK IN SHARE MODE;
        IF o_status IS NULL THEN
            SET NEW.outcome = 'SKIPPED', NEW.detail = 'the order is gone: nothing to do';
        ELSEIF o_status NOT IN ('WAIT_PAY', 'PAID') THEN
            SET NEW.outcome = 'SKIPPED',
                NEW.detail = CONCAT('the order was no longer live (', o_status, '): nothing to do');
        ELSEIF v_newer >= v_live - v_initial THEN
            SET NEW.outcome = 'SKIPPED',
                NEW.detail = CONCAT('the order is no longer beyond stock (', GREATEST(v_live - v_initial, 0),
                                    ' units beyond now): nothing to do');
        END IF;
    END IF;
    IF NEW.outcome = 'DONE' THEN
        IF NEW.action = 'FULFIL' THEN
            UPDATE inventory SET initial_stock = initial_stock + o_qty, stock = stock + o_qty WHERE product_id = v_product;
            SET NEW.detail = CONCAT(o_qty, ' units added to the sale');
        ELSEIF NEW.action = 'CANCEL_REFUND' THEN
            UPDATE orders SET status = 'CANCELLED' WHERE id = o_id;
            UPDATE inventory SET stock = stock + o_qty WHERE product_id = v_product;
            -- Only what the cancel brings stock above zero goes back to Redis.
            SET v_release = GREATEST(v_stock + o_qty, 0) - GREATEST(v_stock, 0);
            IF v_release > 0 THEN
                INSERT INTO outbox (kind, product_id, order_no, qty) VALUES ('RELEASE', v_product, NEW.order_no, v_release);
            END IF;
            IF o_status = 'PAID' THEN
                SET NEW.event_cents = l_amount, NEW.detail = CONCAT('cancelled; ', l_amount, ' cents refunded');
            ELSE
                SET NEW.detail = 'cancelled; it was unpaid: nothing refunded';
            END IF;
        ELSEIF NEW.action = 'COUPON' THEN
            SET NEW.event_cents = l_amount, NEW.detail = CONCAT('coupon of ', l_amount, ' cents');
        ELSE
            SET NEW.detail = 'noted';
        END IF;
    END IF;
END;

-- The line's outcome and its event are born from the effect.
CREATE TRIGGER compensation_effects_apply AFTER INSERT ON compensation_effects FOR EACH ROW
BEGIN
    IF NEW.event_cents IS NOT NULL THEN
        INSERT INTO compensation_events (idempotency_key, kind, case_id, order_no, user_id, action, amount_cents)
            VALUES (CONCAT('compensation:', NEW.case_id, ':', NEW.order_no, ':', NEW.action), 'compensation.executed',
                    NEW.case_id, NEW.order_no, NEW.user_id, NEW.action, NEW.event_cents);
    END IF;
    UPDATE compensation_lines SET outcome = NEW.outcome WHERE case_id = NEW.case_id AND order_no = NEW.order_no;
END;

CREATE TRIGGER compensation_effects_fixed BEFORE UPDATE ON compensation_effects FOR EACH ROW
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an effect is fixed';

CREATE TRIGGER compensation_effects_kept BEFORE DELETE ON compensation_effects FOR EACH ROW
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an effect is kept';

-- An event is born only from its effect (the trigger above), with the effect's buyer and amount.
CREATE TRIGGER compensation_events_born BEFORE INSERT ON compensation_events FOR EACH ROW
BEGIN
    DECLARE e_outcome VARCHAR(16);
    DECLARE e_user BIGINT UNSIGNED;
    DECLARE e_cents BIGINT;
    SELECT CAST(outcome AS CHAR), user_id, event_cents INTO e_outcome, e_user, e_cents FROM compensation_effects
        WHERE case_id = NEW.case_id AND order_no = NEW.order_no AND action = NEW.action;
    IF NOT (e_outcome <=> 'DONE') OR e_cents IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an event needs its effect row';
    END IF;
    SET NEW.user_id = e_user, NEW.amount_cents = e_cents, NEW.status = 'PENDING', NEW.kind = 'compensation.executed',
        NEW.idempotency_key = CONCAT('compensation:', NEW.case_id, ':', NEW.order_no, ':', NEW.action);
END;

-- Downstream marks an event sent; nothing else of it changes, and it is never deleted.
CREATE TRIGGER compensation_events_fixed BEFORE UPDATE ON compensation_events FOR EACH ROW
BEGIN
    IF NEW.idempotency_key <> OLD.idempotency_key OR NEW.kind <> OLD.kind OR NEW.case_id <> OLD.case_id
       OR NEW.order_no <> OLD.order_no OR NEW.user_id <> OLD.user_id OR NEW.action <> OLD.action
       OR NEW.amount_cents <> OLD.amount_cents OR NEW.created_at <> OLD.created_at
       OR (OLD.status = 'SENT' AND NEW.status <> 'SENT') THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an event is fixed (only PENDING -> SENT)';
    END IF;
END;

CREATE TRIGGER compensation_events_kept BEFORE DELETE ON compensation_events FOR EACH ROW
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an event is kept';
