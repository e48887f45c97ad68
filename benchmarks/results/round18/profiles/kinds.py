import sys,collections
pat=sys.argv[1]; files=sys.argv[2:]
c=collections.Counter()
for fn in files:
  for line in open(fn):
    stack,n=line.rsplit(' ',1); n=int(n)
    if pat not in stack: continue
    s=stack[stack.index(pat):]
    if 'defineClass' in s: k='define'
    elif 'findClass' in s or 'getResource' in s: k='read'
    elif 'ClassLoader.loadClass' in s: k='loadClass other'
    elif 'linkCallSite' in s or 'MethodHandleNatives' in s or 'LambdaForm' in s: k='indy/mh'
    elif '<clinit>' in s: k='clinit other'
    else: k='exec'
    c[k]+=n
print(round(sum(c.values())/len(files)), ', '.join('%s %.0f'%(k,v/len(files)) for k,v in c.most_common()))
