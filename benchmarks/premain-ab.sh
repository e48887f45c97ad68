#!/usr/bin/env bash
# What an agent's premain costs the application: the milliseconds from launch to the first line of
# a main method that does nothing else (benchmarks/premain/ToMain.java), without an agent and under
# each given agent jar, the order turning each round as in startup-ab.sh. Everything an agent
# does before main is on the application's critical path, so this isolates that part of the
# start-up cost, with far less spread than a Spring Boot start (a start here takes ~0.05-0.25 s).
# The agents get the same rule file as in startup-ab.sh (options config=PATH, or the options after
# a second '=' in the spec). Prints each start, the medians, and the median of the paired
# differences from the start without an agent, with a bootstrap 95% interval.
#
# Usage: benchmarks/premain-ab.sh ROUNDS LABEL=AGENT_JAR[=OPTIONS] ...
#   e.g. benchmarks/premain-ab.sh 30 floor=benchmarks/target/floor-agents/advice-floor.jar \
#          ours=agent/target/rate-limit-agent.jar
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="$1"
shift
export RATELIMIT_INTERNAL_TOKEN="${RATELIMIT_INTERNAL_TOKEN:-demo-internal-token-change-me}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rules="$work/rules.yaml"
sed '0,/^    limit: 300$/s//    limit: 1000000000000000/' config/rules.yaml > "$rules"
javac -d "$work" benchmarks/premain/ToMain.java

start() { # LABEL [JVM ARGS...]
  local label=$1 t0 main
  shift
  t0=$(date +%s%3N)
  main=$(java "$@" -cp "$work" ToMain 2>"$work/$label.err" | awk '$1 == "to-main" { print $2 }')
  [[ -n $main ]] || { echo "$label: main did not run; stderr:" >&2; cat "$work/$label.err" >&2; exit 1; }
  echo "$label $((main - t0))" | tee -a "$work/results"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(java -version 2>&1 | head -1)"
echo "label to-main-ms"
specs=(none "$@")
for ((r = 1; r <= rounds; r++)); do
  for ((i = 0; i < ${#specs[@]}; i++)); do
    spec=${specs[$(( (r - 1 + i) % ${#specs[@]} ))]}
    if [[ $spec == none ]]; then
      start none
    else
      label=${spec%%=*}
      rest=${spec#*=}
      jar=${rest%%=*}
      options=config=$rules
      [[ $rest == *=* ]] && options=${rest#*=}
      start "$label" "-javaagent:$jar=$options"
    fi
  done
  echo "end of round $r" >>"$work/results"
done
python3 - "$work/results" <<'PY'
import random, statistics, sys
rounds, current = [], {}
for line in open(sys.argv[1]):
    if line.startswith("end of round"):
        rounds.append(current)
        current = {}
        continue
    label, ms = line.split()
    current[label] = int(ms)
labels = list(rounds[0])
for label in labels:
    values = [r[label] for r in rounds]
    print(f"{label} to-main: " + " ".join(map(str, values)))
for label in labels:
    print(f"median {label}: main after {statistics.median(r[label] for r in rounds):.0f} ms")
random.seed(1)
for label in labels:
    if label == "none":
        continue
    d = [r[label] - r["none"] for r in rounds]
    boots = sorted(statistics.median(random.choices(d, k=len(d))) for _ in range(10000))
    print(f"{label} - none, to main: median of {len(d)} paired differences {statistics.median(d):+.0f} ms,"
          f" 95% interval {boots[250]:+.0f} to {boots[9749]:+.0f} ms; mean {statistics.mean(d):+.0f} ms")
PY
