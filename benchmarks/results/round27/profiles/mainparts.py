import sys, re, collections
# per file: main-thread samples in agent code, split by the first agent frame and its next frame
for label in sys.argv[1:]:
    tot = collections.Counter(); n = 0
    import glob
    files = sorted(glob.glob('/tmp/prof27/%s-*.txt' % label))
    for f in files:
        for line in open(f):
            stack, c = line.rsplit(' ', 1); c = int(c)
            fr = stack.split(';')
            if not fr[0].startswith('[DestroyJavaVM'): continue
            i = next((k for k, x in enumerate(fr) if re.search(r'premain|ClassFileTransformer|AdviceTransformer|StartupGate|ClassPrefilter', x)), None)
            if i is None: continue
            key = ' > '.join(re.sub(r'dev/ratelimit/shaded/','',x)[:70] for x in fr[i:i+3])
            tot[key] += c
    print('==', label, sum(tot.values())/len(files))
    for k, v in tot.most_common(25):
        print('%6.1f %s' % (v/len(files), k))
