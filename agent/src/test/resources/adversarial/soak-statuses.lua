-- Counts responses by status code across wrk's threads and prints "STATUS code count" lines.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  statuses = {}
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    local counted = thread:get("statuses")
    for code, n in pairs(counted) do
      total[code] = (total[code] or 0) + n
    end
  end
  for code, n in pairs(total) do
    io.write(string.format("STATUS %d %d\n", code, n))
  end
  io.write(string.format("ERRORS connect=%d read=%d write=%d status=%d timeout=%d\n",
      summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout))
end
