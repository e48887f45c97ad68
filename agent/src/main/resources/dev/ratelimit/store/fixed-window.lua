-- Fixed windows, increment-first, every limit of one rule in one atomic step.
-- KEYS[i]: a hash per limit {w = window id, c = count}; ARGV[i]: the window of limit i in milliseconds;
-- ARGV[#KEYS + i]: its limit.
-- Returns per limit: the count after this call, and the milliseconds left in the window.
-- A call that a limit rejects is taken back out of every limit: of those that allowed it, so that
-- it uses up none of them (a client over a limit of a second keeps its limit of an hour), and of
-- those that refused it, so that no count stands over its limit (a reload that raises the limit
-- goes on counting on these counts, and so may an instance still on the earlier rule).
-- Windows are aligned to the epoch on the server's clock, so every instance agrees on them.
-- The hash names its window, so a counter left over from the window before is never counted
-- on: Redis's expiry and TIME may disagree by a millisecond at a window's edge (a plain counter
-- expiring with its window was still there in the next window's first millisecond, and calls
-- made then counted in the old window). The counter is written with its expiry in this one
-- script, so no counter can be left without one. A counter of the window after the clock's
-- (written before the server's clock stepped back by less than a window, or by a primary whose
-- clock ran a little ahead of this one's) is counted on: its count stands, as in the local store.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
local rejected = false
for i = 1, #KEYS do
  local window = tonumber(ARGV[i])
  local id = math.floor(now / window)
  local stored = tonumber(redis.call('HGET', KEYS[i], 'w'))
  if stored == id + 1 then
    id = stored
  end
  local ends = (id + 1) * window
  local count
  if stored == id then
    count = redis.call('HINCRBY', KEYS[i], 'c', 1)
  else
    redis.call('HSET', KEYS[i], 'w', id, 'c', 1)
    redis.call('PEXPIREAT', KEYS[i], ends)
    count = 1
  end
  out[2 * i - 1] = count
  out[2 * i] = ends - now
  if count > tonumber(ARGV[#KEYS + i]) then
    rejected = true
  end
end
if rejected then
  for i = 1, #KEYS do
    redis.call('HINCRBY', KEYS[i], 'c', -1)
  end
end
return out
