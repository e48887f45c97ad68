#!/usr/bin/env python3
"""Paired differences between two agents of one startup-ab.sh or premain-ab.sh log.

startup-ab.sh pairs each agent with the start without an agent in the same round. This pairs any
two labels of the same run, round by round, from the per-label lists the log ends with (they are
in round order): the median of the differences A - B, with a bootstrap 95% interval over rounds
(fixed seed, 10,000 resamples, as startup-ab.sh does).

Usage: benchmarks/startup-pairs.py LOG A B [A B ...]
   e.g. benchmarks/startup-pairs.py benchmarks/results/round6/startup-ab-20-advice-floor.log ours advice-floor
"""
import random
import statistics
import sys


def lists(path):
    found = {}
    for line in open(path):
        words = line.split()
        if len(words) > 2 and words[1] in ("first-200:", "cpu:", "to-main:"):
            found[(words[0], words[1].rstrip(":"))] = [int(w) for w in words[2:]]
    return found


def main():
    if len(sys.argv) < 4 or len(sys.argv) % 2:
        sys.exit(__doc__)
    found = lists(sys.argv[1])
    for a, b in zip(sys.argv[2::2], sys.argv[3::2]):
        kinds = [what for what in ("first-200", "cpu", "to-main") if (a, what) in found and (b, what) in found]
        if not kinds:
            sys.exit(f"{sys.argv[1]} has no lists for both {a} and {b}")
        for what in kinds:
            d = [x - y for x, y in zip(found[(a, what)], found[(b, what)])]
            random.seed(1)
            boots = sorted(statistics.median(random.choices(d, k=len(d))) for _ in range(10000))
            print(f"{a} - {b}, {what}: median of {len(d)} paired differences {statistics.median(d):+.0f} ms,"
                  f" 95% interval {boots[250]:+.0f} to {boots[9749]:+.0f} ms; mean {statistics.mean(d):+.0f} ms;"
                  f" A faster in {sum(x < 0 for x in d)} of {len(d)}")


main()
