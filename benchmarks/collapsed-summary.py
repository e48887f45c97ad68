#!/usr/bin/env python3
"""Summaries of async-profiler's collapsed stacks (profiled with the 'threads' option), averaged
over several profiles of the same kind of start.

  collapsed-summary.py threads FILE...          samples per thread
  collapsed-summary.py under REGEX FILE...      frames under the first frame matching REGEX,
                                                inclusive samples, the 40 largest
Samples are per profile (the files' mean). With event=cpu,interval=1ms a sample is 1 ms of CPU;
with event=wall,interval=2ms it is 2 ms of wall time of one thread.
"""
import collections
import re
import sys


def stacks(path):
    for line in open(path):
        stack, count = line.rsplit(' ', 1)
        frames = [re.sub(r'0x[0-9a-f]+|dev/ratelimit/shaded/', '', frame) for frame in stack.split(';')]
        # thread names carry a tid and numbered pools: fold them
        frames[0] = re.sub(r'\d+', '#', re.sub(r' tid=\d+', '', frames[0]))
        yield frames, int(count)


def threads(paths):
    totals = collections.Counter()
    for path in paths:
        for frames, count in stacks(path):
            totals[frames[0]] += count
            totals['TOTAL'] += count
    for name, count in totals.most_common(15):
        print('%8.0f %s' % (count / len(paths), name))


def under(pattern, paths):
    inclusive = collections.Counter()
    total = 0
    for path in paths:
        for frames, count in stacks(path):
            at = next((i for i, frame in enumerate(frames) if re.search(pattern, frame)), None)
            if at is None:
                continue
            total += count
            for frame in set(frames[at:]):
                inclusive[frame] += count
    print('%8.0f samples under %s' % (total / len(paths), pattern))
    for frame, count in inclusive.most_common(40):
        print('%8.0f %s' % (count / len(paths), frame[:150]))


if __name__ == '__main__':
    if len(sys.argv) > 2 and sys.argv[1] == 'threads':
        threads(sys.argv[2:])
    elif len(sys.argv) > 3 and sys.argv[1] == 'under':
        under(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
