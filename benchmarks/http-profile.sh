#!/usr/bin/env bash
# A CPU profile of test-app under the agent while wrk loads it (fifteenth round): how much of the
# server's CPU the agent takes, read from where the samples fall rather than from throughput,
# which this machine's neighbours move by more than the agent costs.
#
# Starts test-app with the demo's rule file (api-per-ip raised out of reach, as http-wrk.sh does)
# under JAR, warms it with wrk for 40 s, then profiles it with async-profiler (CPU, one sample per
# 0.2 ms of CPU, 15 s) during a 20 s wrk run; writes collapsed stacks to OUT and wrk's output to
# OUT.wrk, and prints the voluntary context switches of the agent's threads (its clock's wake-ups).
# Summarise with: benchmarks/collapsed-summary.py agent OUT...
#
# Needs async-profiler (ASPROF, default /tmp/ap/bin/asprof; see benchmarks/README.md for how to
# get it from Maven Central), wrk, curl. Usage: benchmarks/http-profile.sh JAR|none OUT
set -euo pipefail
jar=$1
[[ $jar == none ]] || jar=$(realpath "$jar")
out=$(realpath -m "$2")
asprof="${ASPROF:-/tmp/ap/bin/asprof}"
cd "$(dirname "$0")/.."
source benchmarks/test-app-env.sh
url_path=/api/domains/shop.example.com
if [[ $jar == none ]]; then launch prof; else launch prof "-javaagent:$jar=config=$rules"; fi
wait_for prof answers_200
wrk -t2 -c32 -d40s "http://127.0.0.1:$port$url_path" >/dev/null
wrk -t2 -c32 -d20s "http://127.0.0.1:$port$url_path" >"$out.wrk" &
wrk_pid=$!
sleep 2
"$asprof" -d 15 -e cpu -i 200us -o collapsed -f "$out" "$pid" >/dev/null
wait "$wrk_pid"
for task in /proc/"$pid"/task/*; do
  if [[ $(cat "$task/comm") == rate-limit-agen* ]]; then
    echo "$(cat "$task/comm") $(grep voluntary_ctxt_switches "$task/status" | head -1)"
  fi
done
kill "$pid"
wait "$pid" 2>/dev/null || true
