#!/usr/bin/env bash
# usage: prof.sh LABEL N JAVA_ARGS...  (from the repo root)
label=$1; n=$2; shift 2
source benchmarks/test-app-env.sh
for i in $(seq 1 $n); do
  args=()
  for a in "$@"; do args+=("${a//RULES/$rules}"); done
  launch $label -agentpath:/tmp/ap/lib/libasyncProfiler.so=start,event=cpu,interval=1ms,threads,cstack=no "${args[@]}"
  wait_for $label answers_200
  /tmp/ap/bin/asprof stop -o collapsed -f /tmp/prof27/$label-$i.txt $pid >/dev/null
  kill $pid; wait $pid 2>/dev/null
done
