#!/usr/bin/env bash
# start-prof.sh LABEL OUT JVM_ARGS... : one start of test-app under async-profiler (cpu, 1 ms, per thread) to the first 200
cd /work/main
label=$1; out=$2; shift 2
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export RATELIMIT_INTERNAL_TOKEN=demo-internal-token-change-me
java -agentpath:/tmp/ap/lib/libasyncProfiler.so=start,event=cpu,interval=1ms,threads,cstack=no "$@" -jar test-app/target/test-app.jar --server.port=$port >/tmp/prof/$label.log 2>&1 &
pid=$!
start=$(date +%s%N)
until curl -sf -o /dev/null "http://127.0.0.1:$port/api/domains/shop.example.com"; do sleep 0.01; done
echo "$label first-200 $(( ($(date +%s%N) - start) / 1000000 )) ms"
/tmp/ap/bin/asprof stop -o collapsed -f "$out" $pid >/dev/null
kill $pid; wait $pid 2>/dev/null
