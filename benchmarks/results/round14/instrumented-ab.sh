#!/usr/bin/env bash
# fourteenth round, first run: the three methods, 2 forks, two rounds (see benchmarks/instrumented-ab.sh)
FORKS=2 ROUNDS=2 exec "$(dirname "$0")/../../instrumented-ab.sh"
