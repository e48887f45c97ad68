package dev.ratelimit;

/**
 * Threads of the agent's own that an application's thread may cause to start (the clock at the
 * first decision, the Redis store's connector when a call needs a connection and its probe when a
 * call finds the server down, the JMX thread when {@code ManagementFactory} could not be woven).
 */
public final class AgentThreads {
    private AgentThreads() {
    }

    /**
     * An unstarted daemon thread that takes nothing from the thread creating it: it inherits none
     * of its inheritable thread-locals, and its context class loader is the agent's, not the
     * creator's. Otherwise, on an application server, a thread of the agent's that lives on would
     * pin the web application's loader that happened to create it.
     */
    @SuppressWarnings("removal")
    public static Thread daemon(String name, Runnable body) {
        Thread thread = java.security.AccessController.doPrivileged(new Unstarted(name, body));
        thread.setDaemon(true);
        thread.setContextClassLoader(AgentThreads.class.getClassLoader());
        return thread;
    }

    /**
     * Makes the thread inside {@code doPrivileged}. Up to Java 23 a thread keeps the access
     * control context of the code that made it: every protection domain on the creating thread's
     * stack, and with each its class loader. The clock thread, made at the first decision inside
     * a web application's limited method, kept that application's loader for the life of the
     * JVM, so a redeployed application was never collected (review of the twenty-fourth round).
     * Made inside {@code doPrivileged}, it keeps only the domains of the frames above it, the
     * agent's own.
     */
    @SuppressWarnings("removal")
    private static final class Unstarted implements java.security.PrivilegedAction<Thread> {
        private final String name;
        private final Runnable body;

        Unstarted(String name, Runnable body) {
            this.name = name;
            this.body = body;
        }

        @Override
        public Thread run() {
            return new Thread(null, body, name, 0, false);
        }
    }
}
