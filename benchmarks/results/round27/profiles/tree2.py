import sys, re, collections, glob
# inclusive samples of frames one level below the LAST occurrence of an anchor frame, main thread
label, anchor = sys.argv[1], sys.argv[2]
files = sorted(glob.glob('/tmp/prof27/%s-*.txt' % label))
tot = collections.Counter()
for f in files:
    for line in open(f):
        stack, c = line.rsplit(' ', 1); c = int(c)
        fr = stack.split(';')
        if not fr[0].startswith('[DestroyJavaVM'): continue
        idx = [k for k, x in enumerate(fr) if re.search(anchor, x)]
        if not idx: continue
        i = idx[-1]
        key = re.sub(r'dev/ratelimit/shaded/|dev/ratelimit/','',fr[i+1])[:90] if i+1 < len(fr) else '(self)'
        tot[key] += c
print('==', label, sum(tot.values())/len(files))
for k, v in tot.most_common(30):
    print('%6.1f %s' % (v/len(files), k))
