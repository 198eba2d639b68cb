-- The Redis half of an exact reading, atomic for one product.
-- KEYS: 1 stock, 2 seq, 3 inflight, 4 epoch
-- Returns {stock exists (0/1), stock, seq (the cut), inflight as a flat order_no, qty list,
-- epoch (0 when absent)}.
local stock = redis.call('GET', KEYS[1])
local seq = tonumber(redis.call('GET', KEYS[2]) or '0')
local inflight = redis.call('HGETALL', KEYS[3])
local epoch = tonumber(redis.call('GET', KEYS[4]) or '0')
if stock then
  return {1, tonumber(stock), seq, inflight, epoch}
end
return {0, 0, seq, inflight, epoch}
