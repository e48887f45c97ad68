#!/usr/bin/env bash
# usage: threadcpu.sh LABEL JAVA_ARGS... ; prints "LABEL thread cpu_ms" lines incl. ended threads total
cd "$(dirname "$0")/../../.."  # the repository root
label=$1; shift
# a port the kernel just handed out as free (a random one collided with a port in use, and the
# loop below then waited forever for an application that had exited)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
java "$@" -jar test-app/target/test-app.jar --server.port=$port >/tmp/tc-$label.log 2>&1 &
pid=$!
until curl -sf -o /dev/null "http://127.0.0.1:$port/api/domains/shop.example.com"; do
  kill -0 $pid 2>/dev/null || { echo "$label: the application exited; see /tmp/tc-$label.log" >&2; exit 1; }
  sleep 0.01
done
hz=$(getconf CLK_TCK)
total=$(awk -v hz=$hz '{print int(($14+$15)*1000/hz)}' /proc/$pid/stat)
sum=0
for t in /proc/$pid/task/*; do
  name=$(cat $t/comm 2>/dev/null | sed -E 's/[0-9]+/#/g; s/ /_/g')
  c=$(awk -v hz=$hz '{print int(($14+$15)*1000/hz)}' $t/stat 2>/dev/null)
  echo "$label $name $c"
  sum=$((sum + c))
done | awk '{a[$2]+=$3} END {for (k in a) print k, a[k]}' | sed "s/^/$label /" > /tmp/tc-$label.out
live=$(awk '{s+=$3} END {print s}' /tmp/tc-$label.out)
echo "$label ENDED_THREADS $((total - live))" >> /tmp/tc-$label.out
echo "$label TOTAL $total" >> /tmp/tc-$label.out
kill $pid; wait $pid 2>/dev/null
cat /tmp/tc-$label.out
