-- Claim the fence for a rewrite, right after its lock and before its reading (contract
-- section 4, correction): from here every write of an older holder is refused, whatever
-- order the writes arrive in, because `apply.lua` writes only when the fence is its own.
-- KEYS: 1 fence.  ARGV: 1 fencing token F.
-- Returns the fence after the claim: F when claimed, a newer token when one is there.
local fence = tonumber(redis.call('GET', KEYS[1]) or '0')
local token = tonumber(ARGV[1])
if fence > token then
  return fence
end
redis.call('SET', KEYS[1], token)
return token
