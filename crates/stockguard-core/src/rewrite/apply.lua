-- Apply a rewrite under the fence (contract section 4, step 4, with its corrections).
-- KEYS: 1 stock, 2 fence, 3 seq, 4 epoch
-- ARGV: 1 fencing token F (claimed by `claim.lua` before the reading), 2 delta (E - O),
--       3 expected E, 4 mode, 5 the cut's seq (no mode compares it any more: a reset no
--       longer needs a quiet product), 6 the cut's epoch
-- Modes:
--   'delta'   the key was there and the cut is trusted: INCRBY the delta, which keeps the
--             reservations made since the reading; only within the cut's epoch.
--   'rebuild' the key was missing: SET E and start a new epoch (F).
--   'reset'   the key was there but Redis lost history (HISTORY_LOST, or a history a failover
--             forked): INCRBY the delta, whose E took no after-cut correction, so the stock
--             lands at or below the truth, never above (what was reserved since the cut is
--             counted in the DB and kept by the INCRBY: the rewrite reads again for it), and
--             start a new epoch (F); only within the cut's epoch.
-- Returns {code, value}:
--   1 applied: value = stock after INCRBY
--   2 rebuilt (rebuild or reset): value = stock after the SET or the INCRBY
--  -1 refused: the fence is not F (a newer holder claimed it, or it was lost); value = fence
--  -2 the key vanished since it was read (nothing written)
--  -3 the key appeared since it was read as missing (nothing written)
--  -4 Redis moved since the reading (its epoch changed; nothing written)
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
end
if mode == 'delta' then
  return {1, redis.call('INCRBY', KEYS[1], ARGV[2])}
end
redis.call('SET', KEYS[4], token)
if mode == 'reset' then
  return {2, redis.call('INCRBY', KEYS[1], ARGV[2])}
end
redis.call('SET', KEYS[1], ARGV[3])
return {2, tonumber(ARGV[3])}
