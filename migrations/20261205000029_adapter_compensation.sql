-- Compensation over an adapter (issue 29): a sale Stockguard did not build gets its cases in the
-- state database, through the same workflow and the same four-eyes triggers as our own sale's.
--
-- The state database cannot see the sale's database, so a case over an adapter is not born from
-- `orders` and `inventory` here but from the orders its opener read in the sale
-- (`adapter_orders`): the sale's own order ids, buyers, quantities and times, written once and
-- fixed. Everything after opening is the native workflow: a line is born from its order (now
-- the read one), its plan follows the same rules, the maker never approves, a planner or a
-- checker never executes, every step is audited.
--
-- What differs is the effect: the state database cannot cancel an order in the sale's own
-- database, so an effect over an adapter records what the executor's run did there (the sale's
-- own cancelled status written, when the adapter file says how) or that the line was handed
-- over in the approved export; it is still written once per line, by an executor who is
-- neither maker, planner nor checker, with the server's word for who. No refund event is
-- written for such a case: the team's own systems take the export.

-- '' is our own sale; otherwise the adapter file's `[sale] name`.
ALTER TABLE compensation_cases ADD COLUMN sale VARCHAR(128) NOT NULL DEFAULT '' AFTER product_id;
-- One open case per product of each sale.
ALTER TABLE compensation_cases DROP INDEX uk_compensation_open_product,
    ADD UNIQUE KEY uk_compensation_open (sale, open_product);

-- The orders of a sale read over an adapter that a case names: OVERSOLD (a live order beyond
-- the initial stock, last accepted first out) or LOST (accepted, never a row: the hook for the
-- accepted-but-lost listing). Who read them is the server's word.
CREATE TABLE adapter_orders (
    sale        VARCHAR(128)    NOT NULL,
    order_no    VARCHAR(40)     NOT NULL,
    kind        ENUM ('OVERSOLD', 'LOST') NOT NULL,
    product_id  BIGINT UNSIGNED NOT NULL,
    user_id     BIGINT UNSIGNED NOT NULL DEFAULT 0,
    qty         INT             NOT NULL,
    created_at  DATETIME(3)     NOT NULL,
    price_cents BIGINT          NOT NULL DEFAULT 0,
    status_code VARCHAR(64)     NOT NULL DEFAULT '',
    read_by     VARCHAR(128)    NOT NULL DEFAULT '',
    read_at     DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    PRIMARY KEY (sale, order_no),
    KEY idx_adapter_orders_product (sale, product_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TRIGGER adapter_orders_born BEFORE INSERT ON adapter_orders FOR EACH ROW
BEGIN
    IF NEW.qty < 1 OR CHAR_LENGTH(TRIM(NEW.sale)) = 0 THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an order read over an adapter has a sale and at least one unit';
    END IF;
    SET NEW.read_by = SUBSTRING_INDEX(USER(), '@', 1);
END;

CREATE TRIGGER adapter_orders_fixed BEFORE UPDATE ON adapter_orders FOR EACH ROW
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an order read over an adapter is fixed';

CREATE TRIGGER adapter_orders_kept BEFORE DELETE ON adapter_orders FOR EACH ROW
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an order read over an adapter is kept';

DROP TRIGGER compensation_cases_born;
DROP TRIGGER compensation_lines_born;
DROP TRIGGER compensation_effects_check;

-- A case is born a draft of a product on sale (ours), or of a product whose orders were read
-- over the sale's adapter; opened by whoever connects.
CREATE TRIGGER compensation_cases_born BEFORE INSERT ON compensation_cases FOR EACH ROW
BEGIN
    IF NEW.sale = '' THEN
        IF NOT EXISTS (SELECT 1 FROM inventory WHERE product_id = NEW.product_id) THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a case is opened for a product on sale';
        END IF;
    ELSEIF NOT EXISTS (SELECT 1 FROM adapter_orders WHERE sale = NEW.sale AND product_id = NEW.product_id) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: a case over an adapter is opened for orders read from its sale';
    END IF;
    SET NEW.status = 'DRAFT', NEW.maker = NULL, NEW.proposal_step = NULL, NEW.approvals_needed = 1,
        NEW.opened_by = SUBSTRING_INDEX(USER(), '@', 1);
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
    IF o_product <> v_product THEN
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

-- An effect row is its line's execution: written by an executor (neither maker, checker nor
-- planner) of an executing case, for the line's planned action, while the line is pending. On
-- our own sale it locks the product's inventory before the order (the lock order of every
-- path), rechecks the ledger, performs the effect and records it; what the INSERT says of the
-- outcome, the buyer or the amount is overwritten. Over an adapter it records what the run
-- did in the sale's database (or that the line was handed over in the export), with a detail
-- that says so, and no event.
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
    DECLARE o_id BIGINT UNSIGNED;
    DECLARE o_status VARCHAR(16);
    DECLARE o_qty INT;
    DECLARE v_planners TEXT;
    DECLARE r_outcome VARCHAR(16);
    DECLARE r_detail VARCHAR(500);
    SET r_outcome = NEW.outcome, r_detail = NEW.detail;
    SET NEW.executor = SUBSTRING_INDEX(USER(), '@', 1), NEW.event_cents = NULL, NEW.detail = '';
    SELECT CAST(status AS CHAR), maker, proposal_step, product_id, planners, sale
        INTO v_status, v_maker, v_proposal, v_product, v_planners, v_sale
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
    -- Inventory first (our own sale), then the line and the order.
    IF v_sale = '' THEN
        SELECT initial_stock, stock INTO v_initial, v_stock FROM inventory WHERE product_id = v_product FOR UPDATE;
    END IF;
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
    IF v_sale <> '' THEN
        IF CHAR_LENGTH(TRIM(COALESCE(r_detail, ''))) = 0 THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation: an effect over an adapter says what the run did in the sale';
        END IF;
        SET NEW.outcome = COALESCE(r_outcome, 'DONE'), NEW.detail = r_detail;
    ELSE
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
    END IF;
END;
