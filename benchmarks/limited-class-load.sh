#!/usr/bin/env bash
# What the agent adds to loading a class with many limited methods: the weave happens on the
# thread that loads the class, so in an application it is start-up time (or the first request's).
#
# Generates a class with METHODS (default 100) methods annotated @RateLimited(limit = ..., window = ...)
# (inline rules, no rule file entry), one with a single such method, and a third loaded first so that
# neither timed load is Byte Buddy's first weave. A main sleeps 3 s (the agent's start thread is done
# by then), loads the warm-up class, then times Class.forName of the one-method class and of the
# many-method class. Each round starts one JVM per label, the order turning each round as in
# startup-ab.sh; "none" is the same program without an agent.
#
# Usage: benchmarks/limited-class-load.sh ROUNDS LABEL=AGENT_JAR [LABEL=AGENT_JAR ...]
#   e.g. METHODS=100 benchmarks/limited-class-load.sh 10 new=agent/target/rate-limit-agent.jar old=/tmp/old.jar
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="$1"
shift
methods="${METHODS:-100}"
annotations=$(ls annotations/target/rate-limit-annotations-*.jar | grep -v -- '-sources\|-javadoc' | head -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'version: 1\nrules: []\n' >"$work/rules.yaml"

python3 - "$work" "$methods" <<'EOF'
import sys
work, methods = sys.argv[1], int(sys.argv[2])
def limited_class(name, count):
    body = [f'    @RateLimited(limit = 1000000, window = "1s") public int m{i}(int x) {{ return x + {i}; }}'
            for i in range(count)]
    return "\n".join(["import dev.ratelimit.annotation.RateLimited;", f"public class {name} {{", *body, "}", ""])
for name, count in (("Many", methods), ("One", 1), ("Warm", 1)):
    open(f"{work}/{name}.java", "w").write(limited_class(name, count))
open(f"{work}/Main.java", "w").write("""
public class Main {
    public static void main(String[] args) throws Exception {
        Thread.sleep(3000);
        Class.forName("Warm");
        long t0 = System.nanoTime();
        Class.forName("One");
        long t1 = System.nanoTime();
        Class.forName("Many");
        long t2 = System.nanoTime();
        System.out.println("loaded " + (t1 - t0) / 1000 + " " + (t2 - t1) / 1000);
    }
}
""")
EOF
javac -cp "$annotations" -d "$work" "$work"/*.java

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(java -version 2>&1 | head -1)"
echo "methods in the large class: $methods"
echo "label one-method-us $methods-methods-us"
specs=(none "$@")
for ((r = 1; r <= rounds; r++)); do
  for ((i = 0; i < ${#specs[@]}; i++)); do
    spec=${specs[$(( (r - 1 + i) % ${#specs[@]} ))]}
    label=${spec%%=*}
    args=()
    [[ $spec == none ]] || args=("-javaagent:${spec#*=}=config=$work/rules.yaml")
    line=$(java "${args[@]}" -cp "$work:$annotations" Main 2>"$work/$label.err" | awk '$1 == "loaded" { print $2, $3 }')
    [[ -n $line ]] || { echo "$label: no result; stderr:" >&2; cat "$work/$label.err" >&2; exit 1; }
    echo "$label $line" | tee -a "$work/results"
  done
done
python3 - "$work/results" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    label, one, many = line.split()
    rows.setdefault(label, []).append((int(one), int(many)))
for label, values in rows.items():
    print(f"median {label}: one method {statistics.median(v[0] for v in values) / 1000:.1f} ms, "
          f"the large class {statistics.median(v[1] for v in values) / 1000:.1f} ms ({len(values)} runs)")
EOF
