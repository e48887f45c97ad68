# Sourced (from the repository root) by the scripts that start test-app: the app's jar, the
# internal token, a work directory removed on exit, the demo's rule file with api-per-ip raised
# out of reach (so that no start-up request is refused), and free_port.
app_jar=test-app/target/test-app.jar
export RATELIMIT_INTERNAL_TOKEN="${RATELIMIT_INTERNAL_TOKEN:-demo-internal-token-change-me}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rules="$work/rules.yaml"
sed '0,/^    limit: 300$/s//    limit: 1000000000000000/' config/rules.yaml > "$rules"

# A port the kernel just handed out as free (a random one once collided with a port in use).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts test-app on a free port with the given JVM arguments, its output in $work/LABEL.log:
# sets port and pid. Usage: launch LABEL [JVM ARGS...]
launch() {
  local label=$1
  shift
  port=$(free_port)
  java "$@" -jar "$app_jar" --server.port="$port" >"$work/$label.log" 2>&1 &
  pid=$!
}

# Waits until COMMAND succeeds, polling while the application launched as LABEL lives; if it
# dies, prints its log and exits. Usage: wait_for LABEL COMMAND [ARGS...]
wait_for() {
  local label=$1
  shift
  until "$@"; do
    kill -0 "$pid" 2>/dev/null || { echo "$label: the application died; see its log:" >&2; cat "$work/$label.log" >&2; exit 1; }
    sleep 0.01
  done
}

# Whether the application answers 200 on the path every start-up script times.
answers_200() {
  curl -sf -o /dev/null "http://127.0.0.1:$port/api/domains/shop.example.com"
}
