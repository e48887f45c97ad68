#!/usr/bin/env python3
"""Summaries of async-profiler's collapsed stacks (profiled with the 'threads' option), averaged
over several profiles of the same kind of start.

  collapsed-summary.py threads FILE...          samples per thread
  collapsed-summary.py under REGEX FILE...      frames under the first frame matching REGEX,
                                                inclusive samples, the 40 largest
  collapsed-summary.py agent FILE...            per file: the shares of all samples under the
                                                request's decision (and in it: the limiter, and
                                                method handles' own frames), the clock thread, the
                                                rule-file watcher (http-profile.sh's profiles)
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


def agent(paths):
    print('%-34s %8s %8s %8s %8s %8s %8s %8s' % ('file', 'samples', 'request', 'limiter', 'handles', 'clock',
                                                  'watcher', 'agent'))
    for path in paths:
        total = request = limiter = handles = clock = watcher = 0
        for frames, count in stacks(path):
            total += count
            if any('HttpRequests.enter' in frame for frame in frames):
                request += count
                if any('ActiveRule.decide' in frame for frame in frames):
                    limiter += count
                if re.search(r'LambdaForm|Invokers|DirectMethodHandle|Class\.cast', frames[-1]):
                    handles += count
            elif any('CoarseClock.tick' in frame for frame in frames):
                clock += count
            elif any('RuleFileWatcher' in frame for frame in frames):
                watcher += count
        share = lambda n: '%7.2f%%' % (100.0 * n / total)
        print('%-34s %8d %s %s %s %s %s %s' % (path.split('/')[-1][:34], total, share(request), share(limiter),
                                             share(handles), share(clock), share(watcher),
                                             share(request + clock + watcher)))


if __name__ == '__main__':
    if len(sys.argv) > 2 and sys.argv[1] == 'threads':
        threads(sys.argv[2:])
    elif len(sys.argv) > 2 and sys.argv[1] == 'agent':
        agent(sys.argv[2:])
    elif len(sys.argv) > 3 and sys.argv[1] == 'under':
        under(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
