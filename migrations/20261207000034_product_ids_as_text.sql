-- A product id over an adapter may be text (issue 47: a sale keyed by `VARCHAR` ids such as
-- 'SKU-A'). Where the state database keeps a product id of a sale read over its adapter, it
-- keeps it as itself: its text in `product_id`, and in `product_is_text` whether it is text
-- (one column cannot say whether a `17` was the number or the text: a sale's ids are all of
-- one kind, the kind of its product column, and both are kept as they are). Our own sale's
-- ids are numbers, kept as their digits.

ALTER TABLE adapter_baselines
    MODIFY COLUMN product_id VARCHAR(191) NOT NULL,
    ADD COLUMN product_is_text BOOLEAN NOT NULL DEFAULT FALSE AFTER product_id;

ALTER TABLE alert_acks
    MODIFY COLUMN product_id VARCHAR(191) NULL,
    ADD COLUMN product_is_text BOOLEAN NOT NULL DEFAULT FALSE AFTER product_id;

-- Compensation over an adapter (migration 029) keeps the case's product and each order's read
-- from the sale the same way. A case's one open row per product of each sale stays one per
-- product: `open_product` is the product's text (a sale's ids are all of one kind).
ALTER TABLE compensation_cases
    DROP INDEX uk_compensation_open,
    DROP COLUMN open_product;

ALTER TABLE compensation_cases
    MODIFY COLUMN product_id VARCHAR(191) NOT NULL,
    ADD COLUMN product_is_text BOOLEAN NOT NULL DEFAULT FALSE AFTER product_id;

ALTER TABLE compensation_cases
    ADD COLUMN open_product VARCHAR(191) AS (IF(status = 'CLOSED', NULL, product_id)) STORED,
    ADD UNIQUE KEY uk_compensation_open (sale, open_product);

ALTER TABLE adapter_orders
    MODIFY COLUMN product_id VARCHAR(191) NOT NULL,
    ADD COLUMN product_is_text BOOLEAN NOT NULL DEFAULT FALSE AFTER product_id;

-- The triggers that read a case's product, as migrations 029 and 030 left them, with the
-- product as its text and whether it is text. Their rules are unchanged: a case of our own sale
-- is of a product on sale (a number), one over an adapter of orders read from its sale (the same
-- id, of the same kind); a line is an order of its case's product; an effect on our own sale
-- locks and moves the product's inventory by its number; every step is audited with the
-- product as itself (a number, or a string).
DROP TRIGGER compensation_cases_born;
DROP TRIGGER compensation_lines_born;
DROP TRIGGER compensation_steps_apply;
DROP TRIGGER compensation_effects_check;

CREATE TRIGGER compensation_cases_born BEFORE INSERT ON compensation_cases FOR EACH ROW
BEGIN
    IF NEW.sale = '' THEN
        -- Our own sale's ids are numbers, kept as their digits.
        IF NOT (NEW.product_is_text <=> FALSE) OR NOT ((NEW.product_id REGEXP '^(0|[1-9][0-9]{0,19})$') <=> 1) THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a case is opened for a product on sale';
        END IF;
        IF NOT EXISTS (SELECT 1 FROM inventory WHERE product_id = CAST(NEW.product_id AS UNSIGNED)) THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a case is opened for a product on sale';
        END IF;
    ELSEIF NOT EXISTS (SELECT 1 FROM adapter_orders WHERE sale = NEW.sale AND product_id = NEW.product_id
                       AND product_is_text <=> NEW.product_is_text) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a case over an adapter is opened for orders read from its sale';
    END IF;
    SET NEW.status = 'DRAFT', NEW.maker = NULL, NEW.proposal_step = NULL, NEW.approvals_needed = 1,
        NEW.opened_by = SUBSTRING_INDEX(USER(), '@', 1);
END;

CREATE TRIGGER compensation_lines_born BEFORE INSERT ON compensation_lines FOR EACH ROW
BEGIN
    DECLARE v_status VARCHAR(16);
    DECLARE v_product VARCHAR(191);
    DECLARE v_text BOOLEAN;
    DECLARE v_sale VARCHAR(128);
    DECLARE o_product VARCHAR(191);
    DECLARE o_text BOOLEAN DEFAULT FALSE;
    DECLARE o_user BIGINT UNSIGNED;
    DECLARE o_qty INT;
    DECLARE o_at DATETIME(3);
    DECLARE o_price BIGINT;
    IF NEW.reason IS NULL OR NEW.reason NOT IN ('OVERSOLD', 'WITHDRAWN') THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a line''s reason is OVERSOLD or WITHDRAWN';
    END IF;
    SELECT CAST(status AS CHAR), product_id, product_is_text, sale INTO v_status, v_product, v_text, v_sale
        FROM compensation_cases WHERE id = NEW.case_id;
    IF NOT (v_status <=> 'DRAFT') THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: lines are added only to a draft';
    END IF;
    IF v_sale <> '' THEN
        SELECT product_id, product_is_text, user_id, qty, created_at, price_cents
            INTO o_product, o_text, o_user, o_qty, o_at, o_price
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
    IF NOT (o_product <=> v_product AND o_text <=> v_text) THEN
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

CREATE TRIGGER compensation_steps_apply AFTER INSERT ON compensation_steps FOR EACH ROW
BEGIN
    DECLARE v_total BIGINT;
    DECLARE v_above BIGINT;
    DECLARE v_product VARCHAR(191);
    DECLARE v_text BOOLEAN;
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
    -- The product as itself: a number, or over an adapter keyed by text a string.
    SELECT product_id, product_is_text INTO v_product, v_text FROM compensation_cases WHERE id = NEW.case_id;
    IF v_text THEN
        INSERT INTO audit_log (actor, role, environment, action, target, reason, outcome, details)
            VALUES ('', 'db', '', CONCAT('compensation.', LOWER(NEW.step)), CONCAT('case:', NEW.case_id), NEW.reason,
                    'RECORDED', JSON_OBJECT('case_id', NEW.case_id, 'step_id', NEW.id, 'product_id', v_product));
    ELSE
        INSERT INTO audit_log (actor, role, environment, action, target, reason, outcome, details)
            VALUES ('', 'db', '', CONCAT('compensation.', LOWER(NEW.step)), CONCAT('case:', NEW.case_id), NEW.reason,
                    'RECORDED', JSON_OBJECT('case_id', NEW.case_id, 'step_id', NEW.id,
                                            'product_id', CAST(v_product AS UNSIGNED)));
    END IF;
END;

CREATE TRIGGER compensation_effects_check BEFORE INSERT ON compensation_effects FOR EACH ROW
BEGIN
    DECLARE v_status VARCHAR(16);
    DECLARE v_maker VARCHAR(128);
    DECLARE v_proposal BIGINT UNSIGNED;
    DECLARE v_product VARCHAR(191);
    DECLARE v_number BIGINT UNSIGNED;
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
    -- Inventory first (our own sale, whose ids are numbers), then the line and the order.
    IF v_sale = '' THEN
        SET v_number = CAST(v_product AS UNSIGNED);
        SELECT initial_stock, stock INTO v_initial, v_stock FROM inventory WHERE product_id = v_number FOR UPDATE;
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
                WHERE product_id = v_number AND status IN ('WAIT_PAY', 'PAID') LOCK IN SHARE MODE;
            SELECT COALESCE(SUM(buy_count), 0) INTO v_newer FROM orders
                WHERE product_id = v_number AND status IN ('WAIT_PAY', 'PAID') AND id > o_id LOCK IN SHARE MODE;
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
                UPDATE inventory SET initial_stock = initial_stock + o_qty, stock = stock + o_qty WHERE product_id = v_number;
                UPDATE compensation_approved_orders SET initial_stock = initial_stock + o_qty WHERE case_id = NEW.case_id;
                SET NEW.detail = CONCAT(o_qty, ' units added to the sale');
            ELSEIF NEW.action = 'CANCEL_REFUND' THEN
                UPDATE orders SET status = 'CANCELLED' WHERE id = o_id;
                UPDATE inventory SET stock = stock + o_qty WHERE product_id = v_number;
                -- Only what the cancel brings stock above zero goes back to Redis.
                SET v_release = GREATEST(v_stock + o_qty, 0) - GREATEST(v_stock, 0);
                IF v_release > 0 THEN
                    INSERT INTO outbox (kind, product_id, order_no, qty) VALUES ('RELEASE', v_number, NEW.order_no, v_release);
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
