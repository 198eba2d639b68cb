-- Apply one release to Redis, at most once per order (contract: `released` set).
-- KEYS: 1 released set, 2 stock, 3 buyers
-- ARGV: 1 order_no, 2 qty, 3 user_id
-- Returns 1 applied, 0 already applied, -1 stock key missing (left pending: a rebuild of the
-- key from the DB accounts for pending releases, and the release applies after it).
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then
  return 0
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  return -1
end
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('INCRBY', KEYS[2], ARGV[2])
redis.call('HINCRBY', KEYS[3], ARGV[3], -tonumber(ARGV[2]))
return 1
