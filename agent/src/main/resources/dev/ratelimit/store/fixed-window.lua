-- Fixed windows, increment-first, every limit of one rule in one atomic step.
-- KEYS[i]: the counter of limit i; ARGV[i]: the window of limit i in milliseconds.
-- Returns per limit: the count after this call, and the milliseconds left in the window.
-- Windows are aligned to the epoch on the server's clock, so every instance agrees on them.
-- The counter expires when its window ends; INCR and its expiry happen in this one script,
-- so no counter can be left without an expiry.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 1, #KEYS do
  local window = tonumber(ARGV[i])
  local ends = (math.floor(now / window) + 1) * window
  local count = redis.call('INCR', KEYS[i])
  if count == 1 then
    redis.call('PEXPIREAT', KEYS[i], ends)
  end
  out[2 * i - 1] = count
  out[2 * i] = ends - now
end
return out
