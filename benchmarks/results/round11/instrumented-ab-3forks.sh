#!/usr/bin/env bash
# eleventh round: the three methods, 3 forks, two rounds (see benchmarks/instrumented-ab.sh)
FORKS=3 ROUNDS=2 exec "$(dirname "$0")/../../instrumented-ab.sh"
