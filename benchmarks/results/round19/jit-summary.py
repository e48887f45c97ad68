import re,collections,sys
cur=None; res=collections.Counter(); cnt=collections.Counter(); tot=collections.Counter()
for line in open(sys.argv[1],errors='replace'):
    if line.startswith('<task '):
        m=re.search(r"method='([^']*)'",line); s=re.search(r"stamp='([\d.]+)'",line)
        lvl=re.search(r"level='(\d)'",line)
        cur=(m.group(1), float(s.group(1)), lvl.group(1) if lvl else '4')
    elif line.startswith('<task_done') and cur:
        s=float(re.search(r"stamp='([\d.]+)'",line).group(1))
        dt=s-cur[1]; meth=cur[0]; lv=cur[2]
        grp=('bb' if 'bytebuddy' in meth else 'yaml' if 'snakeyaml' in meth else 'caff' if 'github' in meth else 'ours') if meth.startswith('dev.ratelimit') else 'other'
        tot[(grp,lv)]+=dt; cnt[(grp,lv)]+=1
        if meth.startswith('dev.ratelimit'): res[(meth.split(' (')[0],lv)]+=dt
        cur=None
for k in sorted(tot): print(k, cnt[k], round(tot[k]*1000), 'ms')
for k,v in res.most_common(int(sys.argv[2]) if len(sys.argv)>2 else 15): print(round(v*1000,1), k)
