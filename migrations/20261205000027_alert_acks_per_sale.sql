-- Acknowledgements of a sale read over an adapter (issue 28) live in the state database,
-- Stockguard's own, keyed by the adapter sale's name: two sales in one state database keep
-- their acknowledgements apart (`drift:2` of one is not `drift:2` of the other). Our own
-- sale's acknowledgements have the empty name. At most one open acknowledgement per sale and
-- key, as before per key.
ALTER TABLE alert_acks
    DROP INDEX uk_alert_acks_open,
    DROP COLUMN open_key,
    ADD COLUMN sale VARCHAR(128) NOT NULL DEFAULT '' AFTER id;

ALTER TABLE alert_acks
    ADD COLUMN open_key VARCHAR(300) AS (IF(closed_at IS NULL, CONCAT(sale, '/', alert_key), NULL)) STORED,
    ADD UNIQUE KEY uk_alert_acks_open (open_key);
