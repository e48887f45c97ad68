#!/usr/bin/env bash
# The classes each build loads to the first 200 of test-app (thirty-eighth round): one start each
# under -Xlog:class+load, then the count of all classes and of those loaded from the agent jar.
# Usage (from the repository root): benchmarks/results/round38/class-count.sh LABEL=JAR [LABEL=JAR ...]
set -euo pipefail
. benchmarks/test-app-env.sh
for arg in "$@"; do
  l=${arg%%=*} jar=${arg#*=}
  launch "$l" -javaagent:"$jar"=config="$rules" -Xlog:class+load:file="$work/cl-$l.txt"
  wait_for "$l" answers_200
  kill "$pid"; wait "$pid" 2>/dev/null || true
  echo "$l $(grep -c 'source:' "$work/cl-$l.txt") loaded; from the agent jar: $(grep -c "$jar" "$work/cl-$l.txt")"
done
