import sys,collections,re
files=sys.argv[1:]
t=collections.Counter(); m=collections.Counter()
for fn in files:
  for line in open(fn):
    stack,n=line.rsplit(' ',1); n=int(n)
    fr=stack.split(';')
    th=re.sub(r' tid=\d+','',fr[0]); th=re.sub(r'\d+','#',th)
    t[th]+=n
    if th=='[DestroyJavaVM]' or th=='[main]':
        for f in fr:
            if (f.startswith('dev/ratelimit/') and not f.startswith('dev/ratelimit/demo')) or f.startswith('floor/'):
                m[f]+=n; break
k=len(files)
print('TOTAL', round(sum(t.values())/k))
for a,v in t.most_common(14): print(round(v/k), a)
for a,v in m.most_common(4): print('  main:', round(v/k), a)
