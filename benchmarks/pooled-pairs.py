#!/usr/bin/env python3
"""Paired differences A - B pooled over several startup-ab.sh logs of the same builds.

One run of 30 rounds leaves an interval of a few hundred milliseconds on this machine. Runs of
the same two jars on the same machine and Java can be pooled: this reads the per-round figures of
each log (the lists it ends with; for a run that stopped early, its per-start lines, one round
being one line per label), pairs A and B within each round, and prints each log's median
difference and the pooled median with a bootstrap 95% interval (fixed seed, 10,000 resamples of
the pooled rounds).

Usage: benchmarks/pooled-pairs.py A B LOG [LOG ...]
   e.g. benchmarks/pooled-pairs.py advice-floor none benchmarks/results/round8/*.log
"""
import random
import statistics
import sys


def rounds(path):
    """Each round of the log as {label: (first-200 ms, cpu ms)}."""
    lists = {}
    starts = []
    for line in open(path):
        words = line.split()
        if len(words) > 2 and words[1] in ("first-200:", "cpu:"):
            lists[(words[0], words[1].rstrip(":"))] = [int(w) for w in words[2:]]
        elif len(words) == 3 and words[1].isdigit() and words[2].isdigit():
            starts.append((words[0], int(words[1]), int(words[2])))
    labels = sorted({label for label, _ in lists})
    if labels:
        count = len(lists[(labels[0], "first-200")])
        return [{label: (lists[(label, "first-200")][i], lists[(label, "cpu")][i]) for label in labels}
                for i in range(count)]
    per_round = len({label for label, _, _ in starts})
    found = []
    for i in range(0, len(starts) - per_round + 1, per_round):
        found.append({label: (ms, cpu) for label, ms, cpu in starts[i:i + per_round]})
    return found


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    a, b, logs = sys.argv[1], sys.argv[2], sys.argv[3:]
    pooled = {"first-200": [], "cpu": []}
    for log in logs:
        both = [r for r in rounds(log) if a in r and b in r]
        if not both:
            continue
        for index, what in enumerate(("first-200", "cpu")):
            d = [r[a][index] - r[b][index] for r in both]
            pooled[what].extend(d)
            print(f"{log}: {a} - {b}, {what}: median of {len(d)} {statistics.median(d):+.0f} ms")
    for what, d in pooled.items():
        if not d:
            sys.exit(f"no log has both {a} and {b}")
        random.seed(1)
        boots = sorted(statistics.median(random.choices(d, k=len(d))) for _ in range(10000))
        print(f"pooled: {a} - {b}, {what}: median of {len(d)} paired differences {statistics.median(d):+.0f} ms,"
              f" 95% interval {boots[250]:+.0f} to {boots[9749]:+.0f} ms; mean {statistics.mean(d):+.0f} ms")


main()
