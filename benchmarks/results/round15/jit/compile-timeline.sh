#!/usr/bin/env bash
# compilations per 20 s while wrk loads test-app for SECONDS: usage compile-timeline.sh LABEL SECONDS [JAR]
set -euo pipefail
label=$1 seconds=$2 jar=${3:-}
cd /work/main
source benchmarks/test-app-env.sh
args=(-XX:+PrintCompilation)
[[ -n $jar ]] && args+=("-javaagent:$jar=config=$rules")
launch "$label" "${args[@]}"
wait_for "$label" answers_200
for ((i = 0; i < seconds / 20; i++)); do
  wrk -t2 -c32 -d20s "http://127.0.0.1:$port/api/domains/shop.example.com" | awk -v i=$i '/Requests\/sec/ { printf "wrk %3d-%3d s: %s req/s\n", i*20, i*20+20, $2 }'
  echo "  compile lines so far: $(grep -c '::' "$work/$label.log")"
done
cp "$work/$label.log" "/tmp/r15/timeline-$label.log"
kill "$pid"; wait "$pid" 2>/dev/null || true
