#!/usr/bin/env bash
# What an agent adds to the garbage collector's work during a start-up of test-app: for each start,
# to the first 200 on /api/domains/shop.example.com, the GC pauses (count and summed ms), the
# concurrent mark cycles (count and summed wall ms), the GCs' CPU (from -Xlog:gc+cpu), and the
# metaspace in use and classes loaded at that moment (jstat). Starts with no agent and with the
# agent alternate, the order turning each round.
#
# Usage: benchmarks/startup-gc.sh ROUNDS [AGENT_JAR]   (default agent/target/rate-limit-agent.jar)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="$1"
agent="${2:-agent/target/rate-limit-agent.jar}"
. benchmarks/test-app-env.sh

start() { # LABEL [JVM ARGS...]
  local label=$1 port t0 t1 pid
  shift
  t0=$(date +%s%N)
  launch "$label" "$@" -Xlog:gc,gc+cpu:file="$work/gc.log"
  wait_for "$label" answers_200
  t1=$(date +%s%N)
  local metaspace classes
  metaspace=$(jstat -gc "$pid" | tail -1 | awk '{print $10}')
  classes=$(jstat -class "$pid" | tail -1 | awk '{print $1}')
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  python3 - "$label" $(( (t1 - t0) / 1000000 )) "$metaspace" "$classes" "$work/gc.log" <<'PY'
import re, sys
label, ms, metaspace, classes, log = sys.argv[1:6]
pauses = pause_ms = cycles = cycle_ms = 0
cpu = 0.0
for line in open(log):
    m = re.search(r"Pause .* (\d+\.\d+)ms$", line)
    if m:
        pauses += 1
        pause_ms += float(m.group(1))
    m = re.search(r"Concurrent Mark Cycle (\d+\.\d+)ms", line)
    if m:
        cycles += 1
        cycle_ms += float(m.group(1))
    m = re.search(r"User=(\d+\.\d+)s Sys=(\d+\.\d+)s", line)
    if m:
        cpu += float(m.group(1)) + float(m.group(2))
print(f"{label} first200={ms}ms pauses={pauses} pause_ms={pause_ms:.0f} mark_cycles={cycles}"
      f" mark_ms={cycle_ms:.0f} gc_cpu_ms={cpu * 1000:.0f} metaspace_kb={float(metaspace):.0f} classes={classes}")
PY
}

echo "machine: $(nproc) cores, $(java -version 2>&1 | head -1)"
for ((r = 1; r <= rounds; r++)); do
  if (( r % 2 )); then start none; start agent "-javaagent:$agent=config=$rules"
  else start agent "-javaagent:$agent=config=$rules"; start none; fi
done
