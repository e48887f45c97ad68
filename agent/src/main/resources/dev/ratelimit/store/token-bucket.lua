-- Token buckets as one theoretical arrival time per limit (the generic cell rate algorithm),
-- every limit of one rule in one atomic step. Times in microseconds on the server's clock.
-- KEYS[i]: the arrival time of limit i; ARGV[2i-1]: the bucket's capacity in microseconds
-- (limit intervals); ARGV[2i]: the emission interval (window / limit, rounded up) in microseconds.
-- Returns per limit: how far this call's arrival time lies ahead of now. A call more than the
-- capacity ahead of any limit is rejected and writes nothing, in any limit; an allowed one
-- stores its arrival time in each, which expires when the bucket would be full again.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local out = {}
local arrivals = {}
local rejected = false
for i = 1, #KEYS do
  local capacity = tonumber(ARGV[2 * i - 1])
  local interval = tonumber(ARGV[2 * i])
  local arrival = tonumber(redis.call('GET', KEYS[i])) or 0
  if arrival - now > capacity then
    -- further ahead than any allowed call leaves it: the server's clock stepped back. Start the
    -- bucket full again rather than reject for as long as the step.
    arrival = 0
  end
  local nextArrival = math.max(arrival, now) + interval
  local ahead = nextArrival - now
  if ahead > capacity then
    rejected = true
  end
  arrivals[i] = nextArrival
  out[i] = ahead
end
if not rejected then
  for i = 1, #KEYS do
    redis.call('SET', KEYS[i], string.format('%.0f', arrivals[i]), 'PX', math.ceil(out[i] / 1000) + 1)
  end
end
return out
