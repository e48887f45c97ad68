#!/usr/bin/env bash
# Start-up cost of agent jars on the demo application, side by side with no agent.
#
# For each round, starts test-app.jar without an agent and then under each given agent jar, in
# turn, and prints for each start: the milliseconds from launch to the first 200 on
# /api/domains/shop.example.com (curl every 10 ms), and the process's CPU time (user + system,
# from /proc) at that moment. Then the medians. CPU time is the steadier figure on a shared
# machine: on 2 cores a start-up is CPU-bound, so what the agent adds in CPU is what it can add in
# time.
#
# Usage: benchmarks/startup-ab.sh ROUNDS LABEL=AGENT_JAR [LABEL=AGENT_JAR ...]
#   e.g. benchmarks/startup-ab.sh 6 new=agent/target/rate-limit-agent.jar old=/tmp/old/rate-limit-agent.jar
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="$1"
shift
app_jar=test-app/target/test-app.jar
export RATELIMIT_INTERNAL_TOKEN="${RATELIMIT_INTERNAL_TOKEN:-demo-internal-token-change-me}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rules="$work/rules.yaml"
sed '0,/^    limit: 300$/s//    limit: 1000000000000000/' config/rules.yaml > "$rules"

start() { # LABEL [JVM ARGS...]
  local label=$1 port t0 t1 pid cpu
  shift
  port=$((20000 + RANDOM % 20000))
  t0=$(date +%s%N)
  java "$@" -jar "$app_jar" --server.port="$port" >"$work/$label.log" 2>&1 &
  pid=$!
  until curl -sf -o /dev/null "http://127.0.0.1:$port/api/domains/shop.example.com"; do
    kill -0 "$pid" 2>/dev/null || { echo "$label: the application died; see its log:" >&2; cat "$work/$label.log" >&2; exit 1; }
    sleep 0.01
  done
  t1=$(date +%s%N)
  cpu=$(awk -v hz="$(getconf CLK_TCK)" '{print int(($14 + $15) * 1000 / hz)}' "/proc/$pid/stat")
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  echo "$label $(( (t1 - t0) / 1000000 )) $cpu" | tee -a "$work/results"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(java -version 2>&1 | head -1)"
echo "label first-200-ms cpu-ms"
for ((r = 1; r <= rounds; r++)); do
  start none
  for spec in "$@"; do
    start "${spec%%=*}" "-javaagent:${spec#*=}=config=$rules"
  done
done
awk '{ t[$1] = t[$1] " " $2; c[$1] = c[$1] " " $3 }
  END { for (k in t) { print k, "first-200:" t[k]; print k, "cpu:" c[k] } }' "$work/results" | sort
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for label in none $(for spec in "$@"; do echo "${spec%%=*}"; done); do
  mt=$(awk -v l="$label" '$1 == l { print $2 }' "$work/results" | median)
  mc=$(awk -v l="$label" '$1 == l { print $3 }' "$work/results" | median)
  echo "median $label: first 200 after $mt ms, CPU $mc ms"
done
