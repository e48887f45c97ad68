#!/usr/bin/env bash
# Layout it expects (so that the same benchmarks.jar runs against two agent jars; the benchmark's
# fork arguments name ../agent/target/rate-limit-agent.jar and target/classes/instrumented-call.yaml
# relative to the working directory):
#   /tmp/abench/benchmarks.jar                          (benchmarks/target/benchmarks.jar of this build)
#   /tmp/abench/{old,new}/agent/target/rate-limit-agent.jar
#   /tmp/abench/{old,new}/benchmarks/target/classes/instrumented-call.yaml   (this build's)
# A/B of the instrumented call: the same benchmarks.jar, the agent jar before (old) and after (new)
for round in 1 2; do
  for v in old new; do
    echo "=== $v round $round $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    (cd /tmp/abench/$v/benchmarks && nice -n -15 java -jar /tmp/abench/benchmarks.jar InstrumentedCallBenchmark -wi 3 -w 2s -i 5 -r 2s -prof gc 2>&1 | grep -E "^InstrumentedCallBenchmark\.[a-z_]+ |gc.alloc.rate.norm|advice check|Exception|Error" )
  done
done
echo "=== end $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
