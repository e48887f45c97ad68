import collections,sys,glob
files=sorted(glob.glob(sys.argv[1])); target=sys.argv[2]; unit=float(sys.argv[3]); root=sys.argv[4] if len(sys.argv)>4 else 'AgentLauncher.premain'
c=collections.Counter()
for f in files:
    for line in open(f):
        stack,n=line.rsplit(' ',1); n=int(n); fr=stack.split(';')
        if root not in stack: continue
        idx=[i for i,x in enumerate(fr) if target in x]
        if not idx: continue
        i=idx[0]
        c[fr[i-1]]+=n
N=len(files)
print(round(sum(c.values())*unit/N,1),'total')
for k,v in c.most_common(40): print(round(v*unit/N,1),k)
