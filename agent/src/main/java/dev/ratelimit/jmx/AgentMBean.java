package dev.ratelimit.jmx;

/** The agent, {@code dev.ratelimit:type=Agent}. */
public interface AgentMBean {
    String getVersion();

    /** The rule file in force. */
    String getConfigPath();

    /** When the rule file was last (re)loaded or rejected, ISO-8601; the start-up load at first. */
    String getLastReloadTime();

    /** What the last load did: {@code loaded N rules}, or why the previous rules stay in force. */
    String getLastReloadOutcome();

    /**
     * Errors inside the agent since start-up; each let its call through, save a 429 that could
     * not be written (the request stays rejected).
     */
    long getAgentErrors();

    /** Classes the agent failed to instrument; they run unchanged. */
    long getTransformationErrors();

    /** Classes instrumented so far. */
    long getInstrumentedClasses();

    /** The rules in force, by name. */
    String[] getRules();
}
