#!/usr/bin/env python3
"""CPU per thread of whole starts, split by whether an agent's frame is on the stack (the agent's
own packages, its shaded libraries, or the floor agents' package; not the demo's dev/ratelimit/demo),
and on main the outermost such frame. Averaged over the profiles of each kind.
Usage: agent-frames.py 'OURS_GLOB' 'FLOOR_GLOB'  (async-profiler collapsed stacks, 'threads' option)"""
import collections, glob, re, sys

AGENT = re.compile(r'^(dev/ratelimit/(?!demo/)|net/bytebuddy|floor/|org/snakeyaml|com/github/benmanes)')


def load(pattern):
    files = glob.glob(pattern)
    per_thread, on_main = collections.Counter(), collections.Counter()
    for path in files:
        for line in open(path):
            stack, count = line.rsplit(' ', 1)
            frames = [f.replace('dev/ratelimit/shaded/', '') for f in stack.split(';')]
            thread = re.sub(r'\d+', '#', re.sub(r' tid=\d+', '', frames[0]))
            agent = [f for f in frames[1:] if AGENT.match(f)]
            per_thread[(thread, bool(agent))] += int(count)
            if agent and thread == '[DestroyJavaVM]':
                on_main[agent[0]] += int(count)
    return ({k: v / len(files) for k, v in per_thread.items()}, {k: v / len(files) for k, v in on_main.items()})


ours, ours_main = load(sys.argv[1])
floor, floor_main = load(sys.argv[2])
print('%-36s %-12s %8s %8s' % ('thread', 'agent frame', 'ours', 'floor'))
for key in sorted(set(ours) | set(floor), key=lambda k: -ours.get(k, 0)):
    if max(ours.get(key, 0), floor.get(key, 0)) >= 10:
        print('%-36s %-12s %8.0f %8.0f' % (key[0], key[1], ours.get(key, 0), floor.get(key, 0)))
for label, table in (('ours', ours_main), ('floor', floor_main)):
    print('main, outermost agent frame (%s):' % label)
    for frame, ms in sorted(table.items(), key=lambda kv: -kv[1])[:5]:
        print('%8.0f %s' % (ms, frame))
