#!/usr/bin/env bash
for round in 1 2; do
  for v in old new; do
    echo "=== $v round $round $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    (cd /tmp/abench/$v/benchmarks && nice -n -15 java -jar /tmp/abench/benchmarks.jar 'InstrumentedCallBenchmark.(overloaded|pattern|annotated)_agent' -f 2 -wi 3 -w 2s -i 5 -r 2s 2>&1 | grep -E "^InstrumentedCallBenchmark\.[a-z_]+ |Exception")
  done
done
echo "=== none $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
(cd /tmp/abench/new/benchmarks && nice -n -15 java -jar /tmp/abench/benchmarks.jar 'InstrumentedCallBenchmark.(overloaded|pattern|annotated)_none' -f 2 -wi 3 -w 2s -i 5 -r 2s 2>&1 | grep -E "^InstrumentedCallBenchmark\.[a-z_]+ |Exception")
echo "=== end $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
