#!/usr/bin/env bash
# fourteenth round: the rule that can nest only, 3 forks, three rounds (see benchmarks/instrumented-ab.sh)
FORKS=3 ROUNDS=3 METHODS=overloaded exec "$(dirname "$0")/../../instrumented-ab.sh"
