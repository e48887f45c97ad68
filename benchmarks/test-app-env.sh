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
