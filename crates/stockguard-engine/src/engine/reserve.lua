-- Reserve: the one atomic step of the order path (contract section 2).
-- KEYS: 1 stock, 2 inflight, 3 buyers, 4 orders stream, 5 idem, 6 seq, 7 epoch
-- ARGV: 1 order_no, 2 user_id, 3 qty, 4 per-user limit, 5 idem field, 6 the message body
--       ("<order_no> <user_id> <product_id> <qty> <ts ms> <idempotency key>", built by the
--       engine: src/reservation.rs)
-- Returns {code, order_no, seq, epoch}: 1 reserved, 0 sold out, -1 stock key missing, -2
-- per-user limit reached, 2 a replay of an earlier request (its order_no returned, nothing
-- deducted). seq and epoch are the new message's (0 unless reserved): an engine that must
-- write the order to the DB itself (no replica acknowledged it) writes what the consumer would.
local existing = redis.call('HGET', KEYS[5], ARGV[5])
if existing then
  return {2, existing, 0, 0}
end
-- 3: the order number is already in flight for another reservation (two engines issued the
-- same number). Numbers are unique by construction (src/engine/order_no.rs); this refusal is
-- the second line of defence: nothing is deducted and the engine retries with a new number.
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then
  return {3, '', 0, 0}
end
local stock = redis.call('GET', KEYS[1])
if not stock then
  return {-1, '', 0, 0}
end
local qty = tonumber(ARGV[3])
local bought = tonumber(redis.call('HGET', KEYS[3], ARGV[2]) or '0')
if bought + qty > tonumber(ARGV[4]) then
  return {-2, '', 0, 0}
end
if tonumber(stock) < qty then
  return {0, '', 0, 0}
end
local seq = redis.call('INCR', KEYS[6])
redis.call('DECRBY', KEYS[1], qty)
redis.call('HSET', KEYS[2], ARGV[1], qty)
redis.call('HINCRBY', KEYS[3], ARGV[2], qty)
redis.call('HSET', KEYS[5], ARGV[5], ARGV[1])
-- The message names the Redis history its number belongs to, so the DB can tell numbers of
-- a lost history (Redis restarted, flushed, failed over) from the current one's.
local epoch = redis.call('GET', KEYS[7])
if epoch then
  redis.call('XADD', KEYS[4], '*', 'r', ARGV[6], 'seq', seq, 'e', epoch)
else
  redis.call('XADD', KEYS[4], '*', 'r', ARGV[6], 'seq', seq)
end
return {1, ARGV[1], seq, epoch or '0'}
