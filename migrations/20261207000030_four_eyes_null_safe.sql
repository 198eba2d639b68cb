-- Four eyes, round 3 (issue 48): NULLs in a loose session, replaced orders, forged rows.
--
-- Any account may `SET SESSION sql_mode = ''`. In such a session an UPDATE that sets a NOT NULL
-- column to NULL reaches a BEFORE trigger as NULL and is then stored as 0 (or '') with warning
-- 1048. A rule written `NEW.x <> OLD.x` or `NEW.amount_cents <> NEW.price_cents * NEW.qty` is
-- NULL there, not true, and let the row through: a line priced 0 with a refund of 500,000.00, an
-- order's buyer turned 0 after approval, an event zeroed. From here every rule is NULL-safe:
-- fixed fields compare with `<=>`, and a value a rule reads is refused when NULL (or, for an
-- ENUM, when a loose session made it the '' error value) before the rule reads it.
--
-- Replaced orders: `REPLACE INTO orders` (a DELETE then an INSERT) gave an approved line's order
-- another buyer, and the effect took its refund's buyer from the order. Now an order named by a
-- line of our own sale is kept (never deleted, so never replaced), and an effect refuses an order
-- whose buyer, quantity or price is not its line's; the event's buyer is the line's.
--
-- An order's id (its place in the acceptance order) is fixed too. What the checkers approve is
-- kept beside the case (`compensation_approved_orders`, written by the trigger alone): each
-- oversold line's order status and the product's initial stock when the plan is proposed. A
-- refund of an order whose live status moved since (an unpaid order marked paid by hand, then
-- refunded), or a line of a product whose initial stock was lowered since (to keep a cleared
-- oversell "beyond stock"; the case's own fulfilments raise the kept figure too), is SKIPPED with a detail
-- saying so: the next opening finds the order again for a fresh approval.
--
-- The settings row: a missing row (moved by admin with check_constraint_checks = 0) meant one
-- checker; it means two now, and its id is fixed.

DROP TRIGGER orders_fixed;
DROP TRIGGER compensation_lines_born;
DROP TRIGGER compensation_lines_check;
DROP TRIGGER compensation_events_fixed;
DROP TRIGGER compensation_steps_check;
DROP TRIGGER compensation_steps_apply;
DROP TRIGGER compensation_effects_check;
DROP TRIGGER adapter_orders_born;

CREATE TABLE compensation_approved_orders (
    case_id       BIGINT UNSIGNED NOT NULL,
    order_no      VARCHAR(40)     NOT NULL,
    status        VARCHAR(16)     NOT NULL,
    initial_stock BIGINT          NOT NULL,
    PRIMARY KEY (case_id, order_no),
    CONSTRAINT fk_compensation_approved_case FOREIGN KEY (case_id) REFERENCES compensation_cases (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TRIGGER orders_fixed BEFORE UPDATE ON orders FOR EACH ROW
BEGIN
    IF NOT (NEW.id <=> OLD.id) OR NOT (NEW.order_no <=> OLD.order_no) OR NOT (NEW.user_id <=> OLD.user_id)
       OR NOT (NEW.product_id <=> OLD.product_id) OR NOT (NEW.buy_count <=> OLD.buy_count)
       OR NOT (NEW.price_cents <=> OLD.price_cents) OR NOT (NEW.created_at <=> OLD.created_at) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'orders: an order''s id, number, buyer, product, quantity, price and time are fixed';
    END IF;
    IF NEW.status IS NULL OR NEW.status NOT IN ('WAIT_PAY', 'PAID', 'CLOSED', 'CANCELLED') THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'orders: an order''s status is one of WAIT_PAY, PAID, CLOSED, CANCELLED';
    END IF;
END;

-- An order a line of our own sale names is kept: a DELETE (or a REPLACE, which deletes first)
-- would give an approved line's order another buyer.
CREATE TRIGGER orders_kept BEFORE DELETE ON orders FOR EACH ROW
BEGIN
    IF EXISTS (SELECT 1 FROM compensation_lines l JOIN compensation_cases c ON c.id = l.case_id
               WHERE l.order_no = OLD.order_no AND c.sale = '') THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'orders: an order in a compensation case is kept (never deleted or replaced)';
    END IF;
END;

-- A line is born from its order, in a draft of that order's product (and sale).
CREATE TRIGGER compensation_lines_born BEFORE INSERT ON compensation_lines FOR EACH ROW
BEGIN
    DECLARE v_status VARCHAR(16);
    DECLARE v_product BIGINT UNSIGNED;
    DECLARE v_sale VARCHAR(128);
    DECLARE o_product BIGINT UNSIGNED;
    DECLARE o_user BIGINT UNSIGNED;
    DECLARE o_qty INT;
    DECLARE o_at DATETIME(3);
    DECLARE o_price BIGINT;
    IF NEW.reason IS NULL OR NEW.reason NOT IN ('OVERSOLD', 'WITHDRAWN') THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a line''s reason is OVERSOLD or WITHDRAWN';
    END IF;
    SELECT CAST(status AS CHAR), product_id, sale INTO v_status, v_product, v_sale
        FROM compensation_cases WHERE id = NEW.case_id;
    IF NOT (v_status <=> 'DRAFT') THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: lines are added only to a draft';
    END IF;
    IF v_sale <> '' THEN
        SELECT product_id, user_id, qty, created_at, price_cents INTO o_product, o_user, o_qty, o_at, o_price
            FROM adapter_orders WHERE sale = v_sale AND order_no = NEW.order_no
            AND kind = IF(NEW.reason = 'OVERSOLD', 'OVERSOLD', 'LOST');
    ELSEIF NEW.reason = 'OVERSOLD' THEN
        SELECT product_id, user_id, buy_count, created_at, price_cents INTO o_product, o_user, o_qty, o_at, o_price
            FROM orders WHERE order_no = NEW.order_no;
    ELSE
        SELECT product_id, user_id, qty, created_at, price_cents INTO o_product, o_user, o_qty, o_at, o_price
            FROM order_failures WHERE order_no = NEW.order_no;
    END IF;
    IF o_product IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a line is an order of the case (an oversold order, or a withdrawn acceptance), and there is no such order';
    END IF;
    IF NOT (o_product <=> v_product) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a line is an order of the case''s product';
    END IF;
    IF EXISTS (SELECT 1 FROM compensation_lines l JOIN compensation_cases c ON c.id = l.case_id
               WHERE l.order_no = NEW.order_no AND c.sale = v_sale AND (c.status <> 'CLOSED' OR l.outcome = 'DONE')) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: the order is in a case already (open, or compensated)';
    END IF;
    SET NEW.user_id = o_user, NEW.qty = o_qty, NEW.accepted_at = o_at, NEW.price_cents = COALESCE(o_price, 0),
        NEW.action = NULL, NEW.amount_cents = 0, NEW.note = '',
        NEW.outcome = 'PENDING', NEW.outcome_detail = '', NEW.executed_by = NULL, NEW.executed_at = NULL;
END;

-- The order, buyer, quantity, time and price of a line are fixed; its plan changes only while
-- the case is a draft, within the rules; its outcome is its effect's, written once. Every rule
-- reads values refused first when NULL.
CREATE TRIGGER compensation_lines_check BEFORE UPDATE ON compensation_lines FOR EACH ROW
BEGIN
    DECLARE v_status VARCHAR(16);
    DECLARE e_outcome VARCHAR(16);
    DECLARE e_detail VARCHAR(500);
    DECLARE e_executor VARCHAR(128);
    DECLARE e_at DATETIME(3);
    DECLARE v_planner VARCHAR(128);
    SELECT CAST(status AS CHAR) INTO v_status FROM compensation_cases WHERE id = OLD.case_id;
    IF NOT (NEW.case_id <=> OLD.case_id) OR NOT (NEW.order_no <=> OLD.order_no) OR NOT (NEW.user_id <=> OLD.user_id)
       OR NOT (NEW.qty <=> OLD.qty) OR NOT (NEW.accepted_at <=> OLD.accepted_at)
       OR NOT (NEW.price_cents <=> OLD.price_cents) OR NOT (NEW.reason <=> OLD.reason) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a line''s order, buyer, quantity, time and price are fixed';
    END IF;
    IF NEW.amount_cents IS NULL OR NEW.note IS NULL OR NEW.outcome IS NULL OR NEW.outcome_detail IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a line''s amount, note and outcome are never NULL';
    END IF;
    IF NEW.action IS NOT NULL AND NEW.action NOT IN ('FULFIL', 'CANCEL_REFUND', 'COUPON', 'NOTE') THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an action is FULFIL, CANCEL_REFUND, COUPON or NOTE';
    END IF;
    IF NOT (NEW.action <=> OLD.action) OR NEW.amount_cents <> OLD.amount_cents OR NEW.note <> OLD.note THEN
        IF NOT (v_status <=> 'DRAFT') THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: the plan can change only while the case is a draft';
        END IF;
        IF NEW.amount_cents < 0 THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an amount is never negative';
        END IF;
        IF NEW.reason = 'WITHDRAWN' AND NEW.action IN ('FULFIL', 'CANCEL_REFUND') THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a withdrawn acceptance gets a coupon or a note';
        END IF;
        IF NEW.action = 'CANCEL_REFUND' AND NOT (NEW.amount_cents <=> NEW.price_cents * NEW.qty) THEN
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
    IF NOT (NEW.outcome <=> OLD.outcome) THEN
        IF OLD.outcome <> 'PENDING' THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an outcome is written once';
        END IF;
        IF NOT (v_status <=> 'EXECUTING') THEN
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

-- Downstream marks an event sent; nothing else of it changes, and it is never deleted.
CREATE TRIGGER compensation_events_fixed BEFORE UPDATE ON compensation_events FOR EACH ROW
BEGIN
    IF NOT (NEW.idempotency_key <=> OLD.idempotency_key) OR NOT (NEW.kind <=> OLD.kind)
       OR NOT (NEW.case_id <=> OLD.case_id) OR NOT (NEW.order_no <=> OLD.order_no)
       OR NOT (NEW.user_id <=> OLD.user_id) OR NOT (NEW.action <=> OLD.action)
       OR NOT (NEW.amount_cents <=> OLD.amount_cents) OR NOT (NEW.created_at <=> OLD.created_at)
       OR NEW.status IS NULL OR NEW.status NOT IN ('PENDING', 'SENT')
       OR (OLD.status = 'SENT' AND NEW.status <> 'SENT') THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an event is fixed (only PENDING -> SENT)';
    END IF;
END;

CREATE TRIGGER compensation_steps_check BEFORE INSERT ON compensation_steps FOR EACH ROW
BEGIN
    DECLARE v_status VARCHAR(16);
    DECLARE v_maker VARCHAR(128);
    DECLARE v_proposal BIGINT UNSIGNED;
    DECLARE v_approvers TEXT;
    DECLARE v_planners TEXT;
    SET NEW.actor = SUBSTRING_INDEX(USER(), '@', 1);
    IF NEW.step IS NULL OR NEW.step NOT IN ('OPEN', 'PROPOSE', 'APPROVE', 'REJECT', 'EXECUTE', 'EXECUTED', 'CLOSE', 'NOTE')
       OR NEW.reason IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a step is one of the workflow''s, with a reason (never NULL)';
    END IF;
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
        IF NEW.actor <=> v_maker THEN
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
        IF NEW.actor <=> v_maker OR EXISTS (SELECT 1 FROM compensation_steps WHERE case_id = NEW.case_id
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

-- As migration 022's, but a settings row that is not there means two checkers, not one.
CREATE TRIGGER compensation_steps_apply AFTER INSERT ON compensation_steps FOR EACH ROW
BEGIN
    DECLARE v_total BIGINT;
    DECLARE v_above BIGINT;
    DECLARE v_product BIGINT UNSIGNED;
    IF NEW.step = 'PROPOSE' THEN
        SELECT COALESCE(SUM(amount_cents), 0) INTO v_total FROM compensation_lines WHERE case_id = NEW.case_id;
        SELECT two_checkers_above_cents INTO v_above FROM compensation_settings WHERE id = 1;
        UPDATE compensation_cases SET status = 'PROPOSED', maker = NEW.actor, proposal_step = NEW.id, approvers = NULL,
            approvals_needed = IF(v_above IS NULL OR v_total > v_above, 2, 1) WHERE id = NEW.case_id;
        -- What the checkers are asked to approve, on our own sale: each oversold order's status
        -- and the product's initial stock as the plan is proposed (every checker's approval is of
        -- these facts, however long the approvals take).
        DELETE FROM compensation_approved_orders WHERE case_id = NEW.case_id;
        INSERT INTO compensation_approved_orders (case_id, order_no, status, initial_stock)
            SELECT l.case_id, l.order_no, CAST(o.status AS CHAR), i.initial_stock
            FROM compensation_lines l JOIN compensation_cases c ON c.id = l.case_id AND c.sale = ''
            JOIN orders o ON o.order_no = l.order_no
            JOIN inventory i ON i.product_id = o.product_id
            WHERE l.case_id = NEW.case_id AND l.reason = 'OVERSOLD';
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

-- The one settings row stays the one row (a missing row means two checkers anyway), and its
-- threshold is a number of cents, never NULL or below zero.
CREATE TRIGGER compensation_settings_fixed BEFORE UPDATE ON compensation_settings FOR EACH ROW
BEGIN
    IF NOT (NEW.id <=> OLD.id) OR NEW.two_checkers_above_cents IS NULL OR NEW.two_checkers_above_cents < 0 THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: the settings row is id 1 and its threshold is 0 cents or more';
    END IF;
END;

-- An effect row is its line's execution (migration 029), and on our own sale it now refuses an
-- order that is not the one its line was born from: its buyer, quantity and price are the
-- line's, or nothing is executed. The event's buyer is the line's.
CREATE TRIGGER compensation_effects_check BEFORE INSERT ON compensation_effects FOR EACH ROW
BEGIN
    DECLARE v_status VARCHAR(16);
    DECLARE v_maker VARCHAR(128);
    DECLARE v_proposal BIGINT UNSIGNED;
    DECLARE v_product BIGINT UNSIGNED;
    DECLARE v_sale VARCHAR(128);
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
    DECLARE l_qty INT;
    DECLARE l_price BIGINT;
    DECLARE o_id BIGINT UNSIGNED;
    DECLARE o_status VARCHAR(16);
    DECLARE o_qty INT;
    DECLARE o_user BIGINT UNSIGNED;
    DECLARE o_price BIGINT;
    DECLARE v_planners TEXT;
    DECLARE r_outcome VARCHAR(16);
    DECLARE r_detail VARCHAR(500);
    DECLARE a_status VARCHAR(16);
    DECLARE a_initial BIGINT;
    SET r_outcome = NEW.outcome, r_detail = NEW.detail;
    SET NEW.executor = SUBSTRING_INDEX(USER(), '@', 1), NEW.event_cents = NULL, NEW.detail = '';
    SELECT CAST(status AS CHAR), maker, proposal_step, product_id, planners, sale
        INTO v_status, v_maker, v_proposal, v_product, v_planners, v_sale
        FROM compensation_cases WHERE id = NEW.case_id;
    IF NOT (v_status <=> 'EXECUTING') THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: effects are written only while executing';
    END IF;
    IF NEW.executor <=> v_maker OR EXISTS (SELECT 1 FROM compensation_steps WHERE case_id = NEW.case_id
               AND id > v_proposal AND step = 'APPROVE' AND actor = NEW.executor) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: the maker and the checkers cannot execute';
    END IF;
    IF JSON_CONTAINS(COALESCE(v_planners, JSON_ARRAY()), JSON_QUOTE(NEW.executor)) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: who planned a line cannot execute the plan';
    END IF;
    -- Inventory first (our own sale), then the line and the order.
    IF v_sale = '' THEN
        SELECT initial_stock, stock INTO v_initial, v_stock FROM inventory WHERE product_id = v_product FOR UPDATE;
    END IF;
    SELECT CAST(reason AS CHAR), action <=> NEW.action, amount_cents, CAST(outcome AS CHAR), user_id, qty, price_cents
        INTO l_reason, l_same_action, l_amount, l_outcome, l_user, l_qty, l_price
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
    IF v_sale <> '' THEN
        IF CHAR_LENGTH(TRIM(COALESCE(r_detail, ''))) = 0 THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an effect over an adapter says what the run did in the sale';
        END IF;
        IF r_outcome IS NOT NULL AND r_outcome NOT IN ('DONE', 'SKIPPED') THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an effect''s outcome is DONE or SKIPPED';
        END IF;
        SET NEW.outcome = COALESCE(r_outcome, 'DONE'), NEW.detail = r_detail;
    ELSE
        IF l_reason = 'OVERSOLD' THEN
            SELECT id, CAST(status AS CHAR), buy_count, user_id, price_cents INTO o_id, o_status, o_qty, o_user, o_price
                FROM orders WHERE order_no = NEW.order_no FOR UPDATE;
            IF o_status IS NOT NULL AND NOT (o_user <=> l_user AND o_qty <=> l_qty AND COALESCE(o_price, 0) <=> l_price) THEN
                SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: the order is not the one its line was born from (its buyer, quantity or price differ): nothing executed';
            END IF;
            -- A locking read, as the inventory's: the latest (a fulfilment of this case raises
            -- the kept initial stock with the sale's, below), not this statement's snapshot.
            SELECT status, initial_stock INTO a_status, a_initial FROM compensation_approved_orders
                WHERE case_id = NEW.case_id AND order_no = NEW.order_no LOCK IN SHARE MODE;
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
            ELSEIF NEW.action = 'CANCEL_REFUND' AND a_status IS NOT NULL AND o_status <> a_status THEN
                -- A refund follows the status: one the checkers saw unpaid is not refunded paid.
                SET NEW.outcome = 'SKIPPED',
                    NEW.detail = CONCAT('the order changed since the plan was approved (', a_status, ' -> ', o_status,
                                        '): nothing done; the next opening finds it for a fresh approval');
            ELSEIF a_initial IS NOT NULL AND v_initial < a_initial THEN
                -- Lowered (raised stock never makes an order wrongly beyond it).
                SET NEW.outcome = 'SKIPPED',
                    NEW.detail = CONCAT('the product''s initial stock was lowered since the plan was approved (',
                                        a_initial, ' -> ', v_initial,
                                        '): nothing done; the next opening finds it for a fresh approval');
            END IF;
        END IF;
        IF NEW.outcome = 'DONE' THEN
            IF NEW.action = 'FULFIL' THEN
                UPDATE inventory SET initial_stock = initial_stock + o_qty, stock = stock + o_qty WHERE product_id = v_product;
                UPDATE compensation_approved_orders SET initial_stock = initial_stock + o_qty WHERE case_id = NEW.case_id;
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
    END IF;
END;

-- An order read over an adapter has every fact (none NULL), a sale, at least one unit and a
-- price of 0 cents or more; who read it is the server's word.
CREATE TRIGGER adapter_orders_born BEFORE INSERT ON adapter_orders FOR EACH ROW
BEGIN
    IF NEW.sale IS NULL OR NEW.order_no IS NULL OR NEW.kind IS NULL OR NEW.kind NOT IN ('OVERSOLD', 'LOST')
       OR NEW.product_id IS NULL OR NEW.user_id IS NULL OR NEW.qty IS NULL OR NEW.created_at IS NULL
       OR NEW.price_cents IS NULL OR NEW.status_code IS NULL
       OR NEW.qty < 1 OR NEW.price_cents < 0 OR CHAR_LENGTH(TRIM(NEW.sale)) = 0 THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an order read over an adapter has a sale, every fact (none NULL), at least one unit and a price of 0 or more';
    END IF;
    SET NEW.read_by = SUBSTRING_INDEX(USER(), '@', 1), NEW.read_at = CURRENT_TIMESTAMP(3);
END;

-- Two checkers approving in the same instant deadlocked (1213): each verdict's foreign key took
-- a shared lock on the case, then its step asked for the exclusive one. The verdict locks the
-- case exclusively first, so the second waits for the first.
DROP TRIGGER compensation_verdicts_born;
CREATE TRIGGER compensation_verdicts_born BEFORE INSERT ON compensation_verdicts FOR EACH ROW
BEGIN
    DECLARE v_id BIGINT UNSIGNED;
    SELECT id INTO v_id FROM compensation_cases WHERE id = NEW.case_id FOR UPDATE;
    SET NEW.actor = SUBSTRING_INDEX(USER(), '@', 1);
END;

-- An audit row in the workflow's own shape (`role = 'db'`) is the steps trigger's: a client may
-- write one only for a step of the case that this account took, with that step's action. So no
-- role writes an approval, a proposal or an execution that did not happen.
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
END;
