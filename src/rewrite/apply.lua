-- Apply a rewrite under the fence (contract section 4, step 4).
-- KEYS: 1 stock, 2 fence
-- ARGV: 1 fencing token F, 2 delta (E - O), 3 expected E (for a rebuild), 4 mode:
--       'delta' (the key was there when read) or 'rebuild' (it was missing)
-- Returns {code, value}:
--   1 applied: value = stock after INCRBY
--   2 rebuilt: value = stock after SET
--  -1 refused: F is not newer than the fence; value = the fence
--  -2 the key vanished since it was read (nothing written)
--  -3 the key appeared since it was read as missing (nothing written)
local fence = tonumber(redis.call('GET', KEYS[2]) or '0')
local token = tonumber(ARGV[1])
if token <= fence then
  return {-1, fence}
end
local exists = redis.call('EXISTS', KEYS[1]) == 1
if ARGV[4] == 'rebuild' then
  if exists then
    return {-3, 0}
  end
  redis.call('SET', KEYS[1], ARGV[3])
  redis.call('SET', KEYS[2], token)
  return {2, tonumber(ARGV[3])}
end
if not exists then
  return {-2, 0}
end
local after = redis.call('INCRBY', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], token)
return {1, after}
