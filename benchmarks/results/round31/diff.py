import collections,sys,glob
def incl(pat, root):
    files=sorted(glob.glob(pat)); c=collections.Counter(); tot=0
    for f in files:
        for line in open(f):
            stack,n=line.rsplit(' ',1); n=int(n); fr=stack.split(';')
            if root not in stack: continue
            k=[i for i,x in enumerate(fr) if root in x][0]; tot+=n; seen=set()
            for x in fr[k:]:
                x=x.replace('dev/ratelimit/shaded/','')
                if '$$Lambda$' in x: x=x.split('$$Lambda$')[0]+'$$Lambda'
                if 'LambdaForm$' in x: x='LambdaForm'
                if x in seen: continue
                seen.add(x); c[x]+=n
    return tot/len(files)*0.2, {k:v/len(files)*0.2 for k,v in c.items()}
ta,a=incl(sys.argv[1],'loadClassAndCallPremain'); tb,b=incl(sys.argv[2],'loadClassAndCallPremain')
print('total', round(ta,1), round(tb,1))
keys=set(a)|set(b)
rows=sorted(keys,key=lambda k:-(a.get(k,0)-b.get(k,0)))
for k in rows[:int(sys.argv[3])]: print(round(a.get(k,0),1), round(b.get(k,0),1), round(a.get(k,0)-b.get(k,0),1), k)
