#!/usr/bin/env bash
# Start-up cost of agent jars on the demo application, side by side with no agent.
#
# For each round, starts test-app.jar without an agent and under each given agent jar (the order
# turns by one each round), and prints for each start: the milliseconds from launch to the first 200 on
# /api/domains/shop.example.com (curl every 10 ms), and the process's CPU time (user + system,
# from /proc) at that moment. Then the medians, and the median of the paired differences from
# the start without an agent in the same round, with a bootstrap 95% interval (needs python3). CPU
# time is the steadier figure on a shared machine: on 2 cores a start-up is CPU-bound, so what the
# agent adds in CPU is what it can add in time.
#
# Usage: benchmarks/startup-ab.sh ROUNDS LABEL=AGENT_JAR [LABEL=AGENT_JAR ...]
#   e.g. benchmarks/startup-ab.sh 6 new=agent/target/rate-limit-agent.jar old=/tmp/old/rate-limit-agent.jar
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="$1"
shift
. benchmarks/test-app-env.sh

start() { # LABEL [JVM ARGS...]
  local label=$1 port t0 t1 pid cpu
  shift
  t0=$(date +%s%N)
  launch "$label" "$@"
  wait_for "$label" answers_200
  t1=$(date +%s%N)
  cpu=$(awk -v hz="$(getconf CLK_TCK)" '{print int(($14 + $15) * 1000 / hz)}' "/proc/$pid/stat")
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  echo "$label $(( (t1 - t0) / 1000000 )) $cpu" | tee -a "$work/results"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(java -version 2>&1 | head -1)"
echo "label first-200-ms cpu-ms"
# the order turns each round (none a b, a b none, b none a, ...) so that no label always starts
# right after the same other one
specs=(none "$@")
for ((r = 1; r <= rounds; r++)); do
  for ((i = 0; i < ${#specs[@]}; i++)); do
    spec=${specs[$(( (r - 1 + i) % ${#specs[@]} ))]}
    if [[ $spec == none ]]; then
      start none
    else
      start "${spec%%=*}" "-javaagent:${spec#*=}=config=$rules"
    fi
  done
  echo "end of round $r" >>"$work/results"
done
grep -v '^end of round' "$work/results" | awk '{ t[$1] = t[$1] " " $2; c[$1] = c[$1] " " $3 }
  END { for (k in t) { print k, "first-200:" t[k]; print k, "cpu:" c[k] } }' | sort
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for label in none $(for spec in "$@"; do echo "${spec%%=*}"; done); do
  mt=$(awk -v l="$label" '$1 == l { print $2 }' "$work/results" | median)
  mc=$(awk -v l="$label" '$1 == l { print $3 }' "$work/results" | median)
  echo "median $label: first 200 after $mt ms, CPU $mc ms"
done
# Paired figures: within each round, each agent's start minus the start without an agent. The
# machine's speed drifts between rounds; a difference within one round cancels most of that. The
# 95% interval of the median difference is a bootstrap over rounds (fixed seed, 10,000 resamples).
python3 - "$work/results" <<'PY'
import random, statistics, sys
rounds, current = [], {}
for line in open(sys.argv[1]):
    if line.startswith("end of round"):
        rounds.append(current)
        current = {}
        continue
    label, ms, cpu = line.split()
    current[label] = (int(ms), int(cpu))
random.seed(1)
labels = [l for l in rounds[0] if l != "none"]
for label in labels:
    for what, index in (("first 200", 0), ("CPU", 1)):
        d = [r[label][index] - r["none"][index] for r in rounds if label in r and "none" in r]
        boots = sorted(statistics.median(random.choices(d, k=len(d))) for _ in range(10000))
        print(f"{label} - none, {what}: median of {len(d)} paired differences {statistics.median(d):+.0f} ms,"
              f" 95% interval {boots[250]:+.0f} to {boots[9749]:+.0f} ms; mean {statistics.mean(d):+.0f} ms")
PY
