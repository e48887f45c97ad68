#!/usr/bin/env bash
# Decisions per second through the agent against a real Redis, beside redis-benchmark running
# the agent's own fixed-window script with EVALSHA at the same concurrency, in one run.
# Needs: mvn -B -DskipTests install (for the agent jar and test classes), redis-server, redis-benchmark.
# Usage: benchmarks/redis-throughput.sh [THREADS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
threads="${1:-16}"
seconds="${2:-10}"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
work=$(mktemp -d)
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" --daemonize yes \
  --pidfile "$work/redis.pid" --logfile "$work/redis.log"
trap 'kill "$(cat "$work/redis.pid")" 2>/dev/null || true; rm -rf "$work"' EXIT
sleep 0.5

script=agent/src/main/resources/dev/ratelimit/store/fixed-window.lua
sha=$(redis-cli -p "$port" SCRIPT LOAD "$(cat "$script")")
echo "machine: $(nproc) cores, $(java -version 2>&1 | head -1), $(redis-server --version | cut -d' ' -f3)"
echo "redis-benchmark, EVALSHA of the agent's fixed-window script, $threads connections:"
redis-benchmark -p "$port" -c "$threads" -n 400000 -q EVALSHA "$sha" 1 "rl:{bench|k}:fixed-window:1h" 3600000 \
  | tr '\r' '\n' | grep -E "requests per second" | tail -1

cat > "$work/rules.yaml" <<YAML
version: 1
store:
  type: redis
  redis:
    uri: redis://127.0.0.1:$port/0
    timeout: 200ms
rules:
  - name: bench
    match:
      method: dev.ratelimit.fixture.ThroughputMain\$Target#call
    key: arg0
    limit: 1000000000
    window: 1h
YAML
cp="agent/target/test-classes:annotations/target/classes"
echo "through the agent (-javaagent, Redis store), $threads threads, ${seconds}s:"
java -javaagent:agent/target/rate-limit-agent.jar=config="$work/rules.yaml" -cp "$cp" \
  dev.ratelimit.fixture.ThroughputMain "$threads" "$seconds" 2>/dev/null | grep RESULT
echo "redis INFO after the run: $(redis-cli -p "$port" INFO commandstats | grep -E 'cmdstat_evalsha' | tr -d '\r')"
