#!/usr/bin/env python3
"""Pools the pairs of several http-wrk.sh logs of the same two jars (sixteenth round); http-wrk.sh
also calls it on its own table for the figures of one run.

Each http-wrk.sh run starts one JVM per side, so its pairs share one JIT outcome per side; runs of
the same jars an hour apart on this machine gave 0.976 and 0.948. Pooling the pairs of several
runs (several JVM starts) gives a figure less tied to one start.

  http-pooled.py LOG...   the median over all pairs of agent/none requests/s and of agent/none
                          server CPU per request, each with a bootstrap 95% interval (fixed seed,
                          10,000 resamples of the pairs), and the same per log
"""
import random
import statistics
import sys


def pairs(path):
    """(requests/s ratio, CPU per request ratio) of each pair in one log, agent over none."""
    runs = {}
    for line in open(path):
        fields = line.split()
        # the table's rows: pair run requests/s p50 p75 p90 p99 non-2xx cpu-us/req steal%
        if len(fields) == 10 and fields[0].isdigit() and fields[1] in ('none', 'agent'):
            runs[(int(fields[0]), fields[1])] = (float(fields[2]), float(fields[8]))
    numbers = sorted({pair for pair, _ in runs})
    return [(runs[(p, 'agent')][0] / runs[(p, 'none')][0], runs[(p, 'agent')][1] / runs[(p, 'none')][1])
            for p in numbers if (p, 'agent') in runs and (p, 'none') in runs]


def median_with_interval(values):
    rng = random.Random(1)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(10000))
    return statistics.median(values), medians[249], medians[9749]


def line(label, ratios):
    rps = median_with_interval([r for r, _ in ratios])
    cpu = median_with_interval([c for _, c in ratios])
    return '%-50s %3d pairs  requests/s %.3f (%.3f-%.3f)  CPU per request %.3f (%.3f-%.3f)' % (
        (label, len(ratios)) + rps + cpu)


def main(paths):
    if not paths:
        sys.exit(__doc__)
    everything = []
    for path in paths:
        ratios = pairs(path)
        if not ratios:
            sys.exit('no pairs in ' + path)
        everything += ratios
        print(line(path.rsplit('/', 1)[-1], ratios))
    if len(paths) > 1:
        print(line('pooled', everything))


if __name__ == '__main__':
    main(sys.argv[1:])
