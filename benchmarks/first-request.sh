#!/usr/bin/env bash
# The first request's time, once test-app has started and been idle 3 s, with no agent and with
# the agent, alternating (the order turning each round): what the agent's cold request path adds
# to the first request a user sends. Prints curl's time_total of the first and second request.
#
# Usage: benchmarks/first-request.sh ROUNDS [AGENT_JAR]   (default agent/target/rate-limit-agent.jar)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="$1"
agent="${2:-agent/target/rate-limit-agent.jar}"
. benchmarks/test-app-env.sh
url_path=/api/domains/shop.example.com

start() { # LABEL [JVM ARGS...]
  local label=$1 port pid first second
  shift
  launch "$label" "$@"
  wait_for "$label" grep -q "Started DemoApplication" "$work/$label.log"
  sleep 3
  first=$(curl -s -o /dev/null -w '%{time_total}' "http://127.0.0.1:$port$url_path")
  second=$(curl -s -o /dev/null -w '%{time_total}' "http://127.0.0.1:$port$url_path")
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  echo "$label first=${first}s second=${second}s"
}

echo "machine: $(nproc) cores, $(java -version 2>&1 | head -1)"
for ((r = 1; r <= rounds; r++)); do
  if (( r % 2 )); then start none; start agent "-javaagent:$agent=config=$rules"
  else start agent "-javaagent:$agent=config=$rules"; start none; fi
done
