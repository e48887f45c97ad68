#!/usr/bin/env bash
# One start of test-app under async-profiler (unpacked to /tmp/ap as benchmarks/README.md shows),
# per thread, to the first 200; writes collapsed stacks to OUT.
# Usage: [EVENT=cpu,interval=1ms] start-prof.sh LABEL OUT [JVM ARGS...]
# (the seventeenth round's wall-clock profiles: EVENT=wall,interval=2ms)
cd "$(dirname "$0")/../../../.."  # the repository root
label=$1; out=$2; shift 2
event="${EVENT:-cpu,interval=1ms}"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export RATELIMIT_INTERNAL_TOKEN="${RATELIMIT_INTERNAL_TOKEN:-demo-internal-token-change-me}"
java -agentpath:/tmp/ap/lib/libasyncProfiler.so=start,event=$event,threads,cstack=no "$@" \
    -jar test-app/target/test-app.jar --server.port=$port >"/tmp/$label.log" 2>&1 &
pid=$!
start=$(date +%s%N)
until curl -sf -o /dev/null "http://127.0.0.1:$port/api/domains/shop.example.com"; do
  kill -0 $pid 2>/dev/null || { echo "$label: the application exited; see /tmp/$label.log" >&2; exit 1; }
  sleep 0.01
done
echo "$label first-200 $(( ($(date +%s%N) - start) / 1000000 )) ms"
/tmp/ap/bin/asprof stop -o collapsed -f "$out" $pid >/dev/null
kill $pid; wait $pid 2>/dev/null
