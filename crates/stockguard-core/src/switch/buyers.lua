-- Rebuild per-user counts of one product from the DB, for a chunk of users (guided exit).
-- KEYS: 1 buyers hash, 2 released hash
-- ARGV: 1 "reset" (first chunk: start from an empty hash) or "keep", then per user:
--       user_id, live units, n, and n pairs (order_no, qty) of releases still pending in the DB.
-- A pending release that Redis already applied (its order_no is in `released`) is not added
-- back: the relay's give-back already happened, and the count set here replaces it. One that
-- is not yet applied is added, because the relay will take it away when it applies.
-- Returns the number of users written.
if ARGV[1] == 'reset' then
  redis.call('DEL', KEYS[1])
end
local i = 2
local written = 0
while i <= #ARGV do
  local user = ARGV[i]
  local units = tonumber(ARGV[i + 1])
  local n = tonumber(ARGV[i + 2])
  i = i + 3
  for _ = 1, n do
    if redis.call('HEXISTS', KEYS[2], ARGV[i]) == 0 then
      units = units + tonumber(ARGV[i + 1])
    end
    i = i + 2
  end
  if units ~= 0 then
    redis.call('HSET', KEYS[1], user, units)
  else
    redis.call('HDEL', KEYS[1], user)
  end
  written = written + 1
end
return written
