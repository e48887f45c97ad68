import collections,sys,glob
files=sorted(glob.glob(sys.argv[1]))
root=sys.argv[2]; depthfilter=sys.argv[3] if len(sys.argv)>3 else ''
unit=float(sys.argv[4]) if len(sys.argv)>4 else 0.1
incl=collections.Counter(); tot=0
for f in files:
    for line in open(f):
        stack,n=line.rsplit(' ',1); n=int(n); fr=stack.split(';')
        if root not in stack: continue
        k=[i for i,x in enumerate(fr) if root in x][0]
        tot+=n
        seen=set()
        for x in fr[k:]:
            if depthfilter and depthfilter not in x: continue
            if x in seen: continue
            seen.add(x); incl[x]+=n
N=len(files)
print('root total ms/start',round(tot*unit/N,1))
for k,v in incl.most_common(int(sys.argv[5]) if len(sys.argv)>5 else 60): print(round(v*unit/N,1),k)
