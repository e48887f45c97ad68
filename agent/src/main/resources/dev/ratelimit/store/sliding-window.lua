-- Sliding windows (the previous fixed window weighted), every limit of one rule in one atomic step.
-- KEYS[i]: a hash per limit {w = window id, c = count, p = previous window's count};
-- ARGV[i]: the window of limit i in milliseconds; ARGV[#KEYS + i]: its limit.
-- Returns per limit: the count after this call, the previous window's count, and the
-- milliseconds since the current window started. The caller decides with the same function
-- as the local store. A call that the limit rejects (the count plus the previous window's
-- count, at most the limit, weighted by how much of it is still in the sliding window, over
-- the limit: the caller's test) is taken back out of the count, as in the local store, so a
-- client sending over the limit is held to it rather than shut out. A state of the window after
-- the clock's (the server's clock stepped back by less than a window) is counted on, its
-- previous window weighing in full, as in the local store. A call that a limit rejects is
-- taken back out of the limits that allowed it too, so that it uses up none of them.
-- floor(a * b / c), exactly as the caller's mulDiv gives it, for whole a, b, c with 0 <= b <= c
-- and a < 2^53 (a count), c < 2^52 (a window in ms). Lua's numbers are doubles, exact only to
-- 2^53: past that, the product is built from the bits of b as a quotient q and a remainder r
-- of c, each sum below 2c, so that no step rounds.
local function mul_div(a, b, c)
  if a * b < 9007199254740992 then
    return math.floor(a * b / c)
  end
  local ra = math.fmod(a, c)
  local qa = (a - ra) / c
  local q, r = 0, 0
  local bit = 1
  while bit * 2 <= b do
    bit = bit * 2
  end
  while bit >= 1 do
    q, r = 2 * q, 2 * r
    if r >= c then
      q, r = q + 1, r - c
    end
    if b >= bit then
      b = b - bit
      q, r = q + qa, r + ra
      if r >= c then
        q, r = q + 1, r - c
      end
    end
    bit = bit / 2
  end
  return q
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
local allowed = {}
local rejected = false
for i = 1, #KEYS do
  local window = tonumber(ARGV[i])
  local id = math.floor(now / window)
  local state = redis.call('HMGET', KEYS[i], 'w', 'c', 'p')
  if tonumber(state[1]) == id + 1 then
    id = id + 1
  end
  local previous = tonumber(state[3]) or 0
  if tonumber(state[1]) ~= id then
    if tonumber(state[1]) == id - 1 then previous = tonumber(state[2]) or 0 else previous = 0 end
    redis.call('HSET', KEYS[i], 'w', id, 'c', 0, 'p', previous)
  end
  local count = redis.call('HINCRBY', KEYS[i], 'c', 1)
  local limit = tonumber(ARGV[#KEYS + i])
  local into = math.max(0, math.min(window, now - id * window))
  local carried = mul_div(math.min(previous, limit), window - into, window)
  if count + carried > limit then
    redis.call('HINCRBY', KEYS[i], 'c', -1)
    rejected = true
  else
    allowed[#allowed + 1] = KEYS[i]
  end
  redis.call('PEXPIRE', KEYS[i], 2 * window)
  out[3 * i - 2] = count
  out[3 * i - 1] = previous
  out[3 * i] = now - id * window
end
if rejected then
  for _, key in ipairs(allowed) do
    redis.call('HINCRBY', key, 'c', -1)
  end
end
return out
