import collections,sys,glob
files=glob.glob(sys.argv[1]); root=sys.argv[2]; maxd=int(sys.argv[3]); thr=float(sys.argv[4])
c=collections.Counter()
for f in files:
    for line in open(f):
        stack,n=line.rsplit(' ',1); n=int(n); fr=[x.replace('dev/ratelimit/shaded/','') for x in stack.split(';')]
        fr=[x.split('$$Lambda')[0]+'$$L' if '$$Lambda' in x else x for x in fr]
        fr=['LambdaForm' if 'LambdaForm$' in x else x for x in fr]
        idx=[i for i,x in enumerate(fr) if x.endswith(root)]
        if not idx: continue
        k=idx[0]
        path=tuple(fr[k:k+maxd+1])
        for d in range(1,len(path)+1): c[path[:d]]+=n
def show(prefix):
    kids=[(p,v) for p,v in c.items() if len(p)==len(prefix)+1 and p[:len(prefix)]==prefix]
    for p,v in sorted(kids,key=lambda x:-x[1]):
        ms=v*0.2/len(files)
        if ms<thr: continue
        print('  '*len(prefix)+f'{ms:.1f} {p[-1]}')
        show(p)
top=[p for p in c if len(p)==1]
for p in top: print(f'{c[p]*0.2/len(files):.1f} {p[0]}'); show(p)
