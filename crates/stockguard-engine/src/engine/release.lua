-- Apply one release to Redis, at most once per order (`released`: order_no -> the product
-- sequence number at which it was applied, so an exact reading can place it before or after
-- its cut).
-- KEYS: 1 released hash, 2 stock, 3 buyers, 4 seq
-- ARGV: 1 order_no, 2 qty, 3 user_id
-- Returns 1 applied, 0 already applied, -1 stock key missing (left pending: a rebuild of the
-- key from the DB accounts for pending releases, and the release applies after it).
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return 0
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  return -1
end
local seq = redis.call('INCR', KEYS[4])
redis.call('HSET', KEYS[1], ARGV[1], seq)
redis.call('INCRBY', KEYS[2], ARGV[2])
redis.call('HINCRBY', KEYS[3], ARGV[3], -tonumber(ARGV[2]))
return 1
