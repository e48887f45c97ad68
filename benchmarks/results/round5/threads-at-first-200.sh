#!/usr/bin/env bash
# usage: threads.sh ROUNDS label="jvm args" ...   prints per-thread-group CPU at first 200
cd /work/main
rounds=$1; shift
export RATELIMIT_INTERNAL_TOKEN=demo-internal-token-change-me
rules=/tmp/s5/rules.yaml
sed '0,/^    limit: 300$/s//    limit: 1000000000000000/' config/rules.yaml > "$rules"
specs=("$@")
for ((r=1;r<=rounds;r++)); do
 for ((i=0;i<${#specs[@]};i++)); do
  spec=${specs[$(( (r-1+i) % ${#specs[@]} ))]}
  label=${spec%%=*}; args=${spec#*=}; args=${args//RULES/$rules}
  port=$((20000 + RANDOM % 20000))
  t0=$(date +%s%N)
  java $args -jar test-app/target/test-app.jar --server.port=$port >/tmp/s5/$label.log 2>&1 &
  pid=$!
  until curl -sf -o /dev/null "http://127.0.0.1:$port/api/domains/shop.example.com"; do sleep 0.01; done
  t1=$(date +%s%N)
  out=$(for t in /proc/$pid/task/*; do n=$(tr ' ' '_' < $t/comm); s=($(sed 's/.*) //' $t/stat)); echo "$n $(( (${s[11]} + ${s[12]}) * 10 ))"; done | sed -E 's/^(C[12]_CompilerThre|GC_Thread|G1_)[^ ]*/\1/' | awk '{a[$1]+=$2; tot+=$2} END {printf "total=%d", tot; for (k in a) if (a[k]>=30) printf " %s=%d", k, a[k]}')
  ptot=$(awk '{print ($14+$15)*10}' /proc/$pid/stat)
  out="$out proc=$ptot"
  kill $pid; wait $pid 2>/dev/null
  echo "$label wall=$(( (t1-t0)/1000000 )) $out"
 done
done
