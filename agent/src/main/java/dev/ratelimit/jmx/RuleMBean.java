package dev.ratelimit.jmx;

/** One rule, {@code dev.ratelimit:type=Rule,name=RULE}: what it has done since it was loaded. */
public interface RuleMBean {
    /** Calls and requests allowed. */
    long getAllowed();

    /** Calls and requests over the limit (in shadow mode these were let through). */
    long getRejected();

    /** Requests not counted because they carried a valid internal token. */
    long getExempted();

    /** Requests whose token header matched no accepted token. */
    long getForgedTokens();

    /** Decisions its store could not make in time; {@code on-error} decided them. */
    long getStoreErrors();

    /** Requests over the limit let through because their response was already committed. */
    long getPassedCommitted();

    /** Keys tracked in this JVM; -1 when the store is shared (Redis). */
    long getTrackedKeys();
}
