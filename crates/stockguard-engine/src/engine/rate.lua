-- A fixed one-second window per user, shared by every engine instance.
-- KEYS: 1 the user's counter for this second.  ARGV: 1 limit.
-- Returns 1 allowed, 0 limited.
local n = redis.call('INCR', KEYS[1])
if n == 1 then
  redis.call('PEXPIRE', KEYS[1], 2000)
end
if n > tonumber(ARGV[1]) then
  return 0
end
return 1
