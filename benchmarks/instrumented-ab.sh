#!/usr/bin/env bash
# The instrumented call, two builds of the agent alternating (InstrumentedCallBenchmark's *_agent
# forks), then the same methods without the agent.
#
# Expects /tmp/abench/benchmarks.jar (a copy of benchmarks/target/benchmarks.jar) and, for each
# build, /tmp/abench/BUILD/agent/target/rate-limit-agent.jar and
# /tmp/abench/BUILD/benchmarks/target/classes/instrumented-call.yaml: each fork runs in
# /tmp/abench/BUILD/benchmarks, where the benchmark's -javaagent path points.
#
# Usage: [FORKS=3] [ROUNDS=2] [METHODS='overloaded|pattern|annotated'] [BUILDS='old new'] benchmarks/instrumented-ab.sh
forks=${FORKS:-3}
rounds=${ROUNDS:-2}
methods=${METHODS:-overloaded|pattern|annotated}
builds=${BUILDS:-old new}
run() { # BUILD SUFFIX
  (cd "/tmp/abench/$1/benchmarks" && nice -n -15 java -jar /tmp/abench/benchmarks.jar \
      "InstrumentedCallBenchmark.($methods)_$2" -f "$forks" -wi 3 -w 2s -i 5 -r 2s 2>&1 \
      | grep -E "^InstrumentedCallBenchmark\.[a-z_]+ |Exception")
}
for ((round = 1; round <= rounds; round++)); do
  for build in $builds; do
    echo "=== $build round $round $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    run "$build" agent
  done
done
last=${builds##* }
echo "=== none $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
run "$last" none
echo "=== end $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
