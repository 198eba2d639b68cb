-- Apply a rewrite under the fence (contract section 4, step 4, with its corrections).
-- KEYS: 1 stock, 2 fence, 3 seq, 4 epoch
-- ARGV: 1 fencing token F (claimed by `claim.lua` before the reading), 2 delta (E - O),
--       3 expected E, 4 mode, 5 the cut's seq, 6 the cut's epoch
-- Modes:
--   'delta'   the key was there and the cut is trusted: INCRBY the delta, which keeps the
--             reservations made since the reading; only within the cut's epoch.
--   'rebuild' the key was missing: SET E and start a new epoch (F).
--   'reset'   the key was there but Redis lost history (HISTORY_LOST): SET E and start a new
--             epoch (F), only if nothing was reserved or released since the cut (seq and
--             epoch unchanged), since a SET would erase such a change.
-- Returns {code, value}:
--   1 applied: value = stock after INCRBY
--   2 rebuilt (rebuild or reset): value = stock after SET
--  -1 refused: the fence is not F (a newer holder claimed it, or it was lost); value = fence
--  -2 the key vanished since it was read (nothing written)
--  -3 the key appeared since it was read as missing (nothing written)
--  -4 Redis moved since the reading (seq or epoch changed; nothing written)
local fence = tonumber(redis.call('GET', KEYS[2]) or '0')
local token = tonumber(ARGV[1])
if fence ~= token then
  return {-1, fence}
end
local exists = redis.call('EXISTS', KEYS[1]) == 1
local epoch = tonumber(redis.call('GET', KEYS[4]) or '0')
local mode = ARGV[4]
if mode == 'rebuild' then
  if exists then
    return {-3, 0}
  end
elseif not exists then
  return {-2, 0}
elseif epoch ~= tonumber(ARGV[6]) then
  return {-4, 0}
elseif mode == 'reset' and tonumber(redis.call('GET', KEYS[3]) or '0') ~= tonumber(ARGV[5]) then
  return {-4, 0}
end
if mode == 'delta' then
  return {1, redis.call('INCRBY', KEYS[1], ARGV[2])}
end
redis.call('SET', KEYS[1], ARGV[3])
redis.call('SET', KEYS[4], token)
return {2, tonumber(ARGV[3])}
