package dev.ratelimit.bootstrap;

/**
 * The facts of the servlet request the current thread is serving (client key, token verdict),
 * so method rules and {@code @RateLimited} methods called while serving it can key on them and
 * honour its exemption. The value is the runtime's own object; the bridge only carries it.
 */
public final class RequestContext {
    private static final ThreadLocal<Object> CURRENT = new ThreadLocal<>();

    private RequestContext() {
    }

    /** The current request's facts, or {@code null} outside a request. */
    public static Object current() {
        return CURRENT.get();
    }

    /**
     * Sets (or with {@code null} clears) the current request's facts. Clearing keeps the thread's
     * entry with a null value rather than removing it: a pooled thread sets it again for its next
     * request, and a removal costs a search of the thread's map each time.
     */
    public static void set(Object facts) {
        CURRENT.set(facts);
    }
}
