package dev.ratelimit.instrument;

/**
 * The agent's logger for the classes that run before the JDK's logging is started (in
 * {@code premain}, on {@code main}): looked up on first use, because the lookup starts it.
 */
final class AgentLog {
    static final System.Logger LOG = System.getLogger("dev.ratelimit");

    private AgentLog() {
    }
}
