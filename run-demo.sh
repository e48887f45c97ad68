#!/usr/bin/env bash
# Builds everything and runs the demo application under the agent with config/rules.yaml.
# Local counters, nothing to install. Stop it with Ctrl-C. PORT (8080) and APP_JAR (the Spring
# Boot demo on Tomcat; test-app-jetty/target/test-app-jetty.jar for Jetty) may be set.
set -euo pipefail
cd "$(dirname "$0")"
mvn -B -q -DskipTests package
export RATELIMIT_INTERNAL_TOKEN="${RATELIMIT_INTERNAL_TOKEN:-demo-internal-token-change-me}"
exec java -javaagent:agent/target/rate-limit-agent.jar=config=config/rules.yaml \
  -jar "${APP_JAR:-test-app/target/test-app.jar}" --server.port="${PORT:-8080}"
