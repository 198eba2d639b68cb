-- The actor of an audit row is the server's word, not the client's (issue 15): the user part
-- of `USER()`, the account this connection logged in as (inside a trigger `CURRENT_USER()`
-- is the trigger's definer). What the client says of itself (the profile's actor name) is
-- kept beside it, as a claim.
ALTER TABLE audit_log ADD COLUMN claimed_actor VARCHAR(128) NOT NULL DEFAULT '' AFTER actor;

CREATE TRIGGER audit_log_actor_from_server BEFORE INSERT ON audit_log FOR EACH ROW
    SET NEW.claimed_actor = NEW.actor, NEW.actor = SUBSTRING_INDEX(USER(), '@', 1);
