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

    /** Sets (or with {@code null} clears) the current request's facts. */
    public static void set(Object facts) {
        if (facts == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(facts);
        }
    }
}
