#!/usr/bin/env bash
# HTTP overhead and start-up of the agent on the demo application (test-app), in one script.
#
#  1. Throughput: two test-app JVMs, one plain and one under the agent, both started once and
#     warmed up with wrk; then PAIRS pairs of wrk runs alternate between them (the order flips each
#     pair: none/agent, agent/none, ...), each SECONDS long at 2 threads and 32 connections, with
#     --latency. Prints requests/s, latency percentiles, per-pair ratios and their median (the
#     headline; one disturbed pair moves a mean a lot on a shared machine) with a bootstrap 95%
#     interval, and the server JVM's CPU time per request in each run (from /proc): the agent's
#     cost per request, steadier than throughput when the machine's speed drifts. Needs python3.
#  2. Start-up: the time from launching `java -jar test-app.jar` to its first 200 response, with and
#     without the agent, alternating, STARTS of each; prints each and the medians.
#
# The rule file is config/rules.yaml with only the limit of api-per-ip (`/api/**`, key client-ip)
# raised from 300 per minute to 10^15 per minute, so every request is allowed and still goes the
# whole way through the agent (token check, client-ip key, counter, RateLimit headers). wrk GETs
# /api/domains/shop.example.com; the script checks that the agent answers with the RateLimit
# header, and wrk's "Non-2xx or 3xx responses" line (printed when there are any) shows rejects.
#
# Needs: mvn -B -DskipTests install (agent/target/rate-limit-agent.jar, test-app/target/test-app.jar),
# wrk and curl. Usage: [AGENT_JAR=JAR] benchmarks/http-wrk.sh [PAIRS] [SECONDS] [STARTS] [WARMUP_SECONDS]
# With BASELINE_JAR=JAR, the JVM labelled "none" runs under that agent jar instead of none (two
# builds of the agent, side by side, in one run: the ratios are then AGENT_JAR's over BASELINE_JAR's).
# Either may be the HTTP floor, benchmarks/target/floor-agents/http-floor.jar (floor-agents.sh): the
# least per-request work the rule asks, as a reference (sixteenth round).
# (WARMUP_SECONDS: wrk on each JVM before the pairs; default SECONDS, at least 15)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs="${1:-3}"
seconds="${2:-15}"
starts="${3:-5}"
warmup="${4:-$(( seconds > 15 ? seconds : 15 ))}"
threads=2
connections=32
agent_jar="${AGENT_JAR:-agent/target/rate-limit-agent.jar}"
app_jar=test-app/target/test-app.jar
path=/api/domains/shop.example.com
export RATELIMIT_INTERNAL_TOKEN="${RATELIMIT_INTERNAL_TOKEN:-demo-internal-token-change-me}"
for f in "$agent_jar" "$app_jar"; do
  [[ -f $f ]] || { echo "missing $f: run mvn -B -DskipTests install first" >&2; exit 1; }
done
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install -y wrk)" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

rules="$work/rules.yaml"
# raise only api-per-ip's limit (the first "limit: 300" in the file)
sed '0,/^    limit: 300$/s//    limit: 1000000000000000/' config/rules.yaml > "$rules"
grep -q 'limit: 1000000000000000' "$rules" || { echo "could not raise api-per-ip's limit" >&2; exit 1; }
# checked by this build's agent (AGENT_JAR may be a floor agent, which reads no rule file)
java -jar agent/target/rate-limit-agent.jar check "$rules" >/dev/null

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_app NAME PORT [JVM ARGS...]: starts test-app in the background, sets $started_pid
start_app() {
  local name=$1 port=$2
  shift 2
  java "$@" -jar "$app_jar" --server.port="$port" >"$work/$name.log" 2>&1 &
  started_pid=$!
  pids+=("$started_pid")
}

# wait_first_ok NAME PORT PID: polls every 10 ms until a 200; returns 2 if the port was taken
# meanwhile (the caller retries on another), fails the script if the JVM died otherwise
wait_first_ok() {
  local name=$1 port=$2 pid=$3
  until [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$path" 2>/dev/null) == 200 ]]; do
    if ! kill -0 "$pid" 2>/dev/null; then
      grep -q "already in use" "$work/$name.log" && return 2
      echo "test-app died; its log:" >&2; cat "$work/$name.log" >&2; exit 1
    fi
    sleep 0.01
  done
}

# launch NAME [JVM ARGS...]: starts test-app on a free port and waits for its first 200; sets
# $started_pid, $started_port and $started_ms (launch to first 200)
launch() {
  local name=$1 t0 t1 rc
  shift
  while true; do
    started_port=$(free_port)
    t0=$(date +%s%N)
    start_app "$name" "$started_port" "$@"
    rc=0
    wait_first_ok "$name" "$started_port" "$started_pid" || rc=$?
    t1=$(date +%s%N)
    ((rc == 0)) && break
    echo "(port $started_port was taken meanwhile; again)" >&2
  done
  started_ms=$(( (t1 - t0) / 1000000 ))
}

stop_app() {
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(java -version 2>&1 | head -1)"
echo "wrk -t$threads -c$connections -d${seconds}s --latency http://127.0.0.1:PORT$path; $pairs pairs; rule file: config/rules.yaml with api-per-ip at 10^15/min"
echo

# ---- throughput ---------------------------------------------------------------------------------
baseline_jar="${BASELINE_JAR:-}"
if [[ -n $baseline_jar ]]; then
  echo "baseline: the JVM labelled none runs under $baseline_jar"
  launch none "-javaagent:$baseline_jar=config=$rules"
else
  launch none
fi
pid_none=$started_pid port_none=$started_port
launch agent "-javaagent:$agent_jar=config=$rules"
pid_agent=$started_pid port_agent=$started_port

# proof that the agent acts on this path (and the plain app does not)
headers=$(curl -s -D - -o /dev/null "http://127.0.0.1:$port_agent$path")
grep -qi '^RateLimit-Policy: "api-per-ip"' <<<"$headers" || { echo "the agent did not answer with RateLimit-Policy:"; echo "$headers"; exit 1; } >&2
if [[ -z $baseline_jar ]] && curl -s -D - -o /dev/null "http://127.0.0.1:$port_none$path" | grep -qi '^RateLimit'; then
  echo "the plain app answers with RateLimit headers?" >&2; exit 1
fi
echo "agent check: $(grep -i '^RateLimit-Policy' <<<"$headers" | tr -d '\r')"

cpu_ms() { # PID -> the process's CPU time so far (user + system), ms
  awk -v hz="$(getconf CLK_TCK)" '{ print int(($14 + $15) * 1000 / hz) }' "/proc/$1/stat"
}
machine_ticks() { # -> "steal total": the whole machine's CPU ticks so far (/proc/stat), stolen and all
  awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print $9, t }' /proc/stat
}
run_wrk() { # NAME PORT DURATION [PID] -> output file; with PID, the server's CPU ms during the run too
  local before=0 steal0 total0 steal1 total1
  [[ -n ${4:-} ]] && before=$(cpu_ms "$4")
  read -r steal0 total0 < <(machine_ticks)
  wrk -t"$threads" -c"$connections" -d"$3" --latency "http://127.0.0.1:$2$path" >"$work/wrk-$1.txt" 2>&1
  [[ -n ${4:-} ]] && echo "server-cpu-ms $(( $(cpu_ms "$4") - before ))" >>"$work/wrk-$1.txt"
  # the share of the machine's CPU time the hypervisor gave to others: a disturbed run shows here
  read -r steal1 total1 < <(machine_ticks)
  echo "steal-percent $(awk -v s=$((steal1 - steal0)) -v t=$((total1 - total0)) 'BEGIN { printf "%.1f", (t > 0 ? 100 * s / t : 0) }')" >>"$work/wrk-$1.txt"
  return 0
}
field() { # FILE -> "rps p50 p75 p90 p99 non2xx"
  awk '
    function us(v) { if (v ~ /us$/) return v+0; if (v ~ /ms$/) return v*1000; if (v ~ /s$/) return v*1000000; return v }
    /Requests\/sec:/ { rps=$2 }
    / requests in / { requests=$1 }
    /^server-cpu-ms / { cpu=$2 }
    /^steal-percent / { steal=$2 }
    /^ +50%/ { p50=us($2) } /^ +75%/ { p75=us($2) } /^ +90%/ { p90=us($2) } /^ +99%/ { p99=us($2) }
    /Non-2xx or 3xx responses:/ { bad=$5 }
    /Socket errors/ { err=$0 }
    END { printf "%s %s %s %s %s %s %.2f %s\n", rps, p50, p75, p90, p99, (bad==""?0:bad), (requests>0 ? cpu*1000/requests : 0), steal }' "$1"
}

echo "warm-up: ${warmup}s each"
run_wrk warm-none "$port_none" "${warmup}s"
run_wrk warm-agent "$port_agent" "${warmup}s"

printf '\n%-6s %-6s %12s %10s %10s %10s %10s %8s %12s %7s\n' pair run "requests/s" "p50 us" "p75 us" "p90 us" "p99 us" "non-2xx" "cpu us/req" "steal%"
: >"$work/agent-over-none"
for ((p = 1; p <= pairs; p++)); do
  if ((p % 2 == 1)); then order="none agent"; else order="agent none"; fi
  for run in $order; do
    port_var="port_$run"
    pid_var="pid_$run"
    run_wrk "$run-$p" "${!port_var}" "${seconds}s" "${!pid_var}"
    read -r rps p50 p75 p90 p99 bad cpu steal < <(field "$work/wrk-$run-$p.txt")
    printf '%-6s %-6s %12s %10s %10s %10s %10s %8s %12s %7s\n' "$p" "$run" "$rps" "$p50" "$p75" "$p90" "$p99" "$bad" "$cpu" "$steal"
    echo "$p $run $rps $p50 $p75 $p90 $p99 $bad $cpu $steal" >>"$work/agent-over-none"
  done
done
echo
awk '
  { rps[$1,$2]=$3; for (i=4;i<=7;i++) lat[$2,i]+=$i; n[$2]++; sum[$2]+=$3; if ($8>0) bad+=$8 }
  END {
    for (p=1; (p,"none") in rps; p++) { r[p]=rps[p,"agent"]/rps[p,"none"]; printf "pair %d: agent/none requests/s = %.3f\n", p, r[p] }
    np=p-1; for (i=1;i<=np;i++) for (j=i+1;j<=np;j++) if (r[j]<r[i]) { t=r[i]; r[i]=r[j]; r[j]=t }
    printf "median of the pair ratios agent/none requests/s = %.3f (target >= 0.97)\n", (np%2) ? r[(np+1)/2] : (r[np/2]+r[np/2+1])/2
    printf "mean requests/s: none %.0f, agent %.0f; ratio of the means agent/none = %.3f\n",
      sum["none"]/n["none"], sum["agent"]/n["agent"], (sum["agent"]/n["agent"])/(sum["none"]/n["none"])
    printf "mean latency (us)  none: p50 %.0f p75 %.0f p90 %.0f p99 %.0f\n", lat["none",4]/n["none"], lat["none",5]/n["none"], lat["none",6]/n["none"], lat["none",7]/n["none"]
    printf "mean latency (us) agent: p50 %.0f p75 %.0f p90 %.0f p99 %.0f\n", lat["agent",4]/n["agent"], lat["agent",5]/n["agent"], lat["agent",6]/n["agent"], lat["agent",7]/n["agent"]
    printf "ratio agent/none latency: p50 %.3f p99 %.3f\n", lat["agent",4]/lat["none",4], lat["agent",7]/lat["none",7]
    printf "non-2xx responses in all measured runs: %d\n", bad
  }' "$work/agent-over-none"
# the median pair ratios of requests/s and of the server's CPU time per request (the steadier
# figure: what the agent adds to each request), with bootstrap 95% intervals, as http-pooled.py
# gives them for several runs; then the medians of the CPU time per request themselves
benchmarks/http-pooled.py "$work/agent-over-none"
python3 - "$work/agent-over-none" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
cpu = {run: statistics.median(float(f[8]) for f in rows if f[1] == run) for run in ("none", "agent")}
print(f"server CPU per request, median: none {cpu['none']:.1f} us, agent {cpu['agent']:.1f} us,"
      f" difference {cpu['agent'] - cpu['none']:+.1f} us")
PY
echo
echo "last pair, as wrk printed it:"
cat "$work/wrk-none-$pairs.txt" "$work/wrk-agent-$pairs.txt"
stop_app "$pid_none"
stop_app "$pid_agent"

# ---- start-up -----------------------------------------------------------------------------------
# (none with STARTS = 0)
if ((starts > 0)); then
  echo
  echo "start-up: launch of java -jar test-app.jar to the first 200 on $path (ms), alternating"
  : >"$work/start-none"
  : >"$work/start-agent"
  for ((i = 1; i <= starts; i++)); do
    for run in none agent; do
      if [[ $run == agent ]]; then
        launch "start-$run" "-javaagent:$agent_jar=config=$rules"
      else
        launch "start-$run"
      fi
      ms=$started_ms
      echo "$ms" >>"$work/start-$run"
      printf 'start %d %-5s %6d ms\n' "$i" "$run" "$ms"
      stop_app "$started_pid"
    done
  done
  m_none=$(median <"$work/start-none")
  m_agent=$(median <"$work/start-agent")
  echo "median start-up: none $m_none ms, agent $m_agent ms, difference $(awk -v a="$m_agent" -v b="$m_none" 'BEGIN{print a-b}') ms (target <= +300 ms)"
fi
