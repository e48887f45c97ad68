package dev.ratelimit.bootstrap;

/**
 * What the agent keeps per thread: the facts of the servlet request the thread is serving (client
 * key, token verdict), so method rules and {@code @RateLimited} methods called while serving it
 * can key on them and honour its exemption; and the limited calls the thread is inside (see
 * {@code MethodSites}). The values are the runtime's own objects; the bridge only carries them,
 * in one thread-local, so a limited call looks up the thread's state once.
 */
public final class RequestContext {
    private static final ThreadLocal<Slot> CURRENT = ThreadLocal.withInitial(Slot::new);

    private RequestContext() {
    }

    /** The current request's facts, or {@code null} outside a request. */
    public static Object current() {
        return CURRENT.get().request;
    }

    /** Sets (or with {@code null} clears) the current request's facts. */
    public static void set(Object facts) {
        CURRENT.get().request = facts;
    }

    /** This thread's state, for a caller that reads more than the request. */
    public static Slot slot() {
        return CURRENT.get();
    }

    /** One thread's state; only that thread reads or writes it. */
    public static final class Slot {
        /** The facts of the request being served, or {@code null}. */
        public Object request;
        /** The runtime's record of the limited calls the thread is inside, or {@code null}. */
        public Object calls;
        /** How deep {@link #calls} was when the request being served began. */
        public int callsAtRequest;
        /**
         * Whether the thread is reading a rule's key (an argument's getter or toString, the
         * principal's name): a limited method called meanwhile is the agent's call, and is not
         * counted.
         */
        public boolean readingKey;

        Slot() {
        }
    }
}
