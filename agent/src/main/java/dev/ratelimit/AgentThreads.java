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
     * of its inheritable thread-locals, its context class loader is the agent's, not the
     * creator's, its priority is the normal one, not the creator's, and it is in the root thread
     * group, not the creator's. Otherwise, on an
     * application server, a thread of the agent's that lives on would pin the web application's
     * loader that happened to create it.
     */
    @SuppressWarnings("removal")
    public static Thread daemon(String name, Runnable body) {
        Thread thread = java.security.AccessController.doPrivileged(new Unstarted(name, body));
        thread.setDaemon(true);
        // a new thread takes its creator's priority: a low-priority worker starting the clock
        // would slow every window's time (where the OS honours priorities: Windows, macOS)
        thread.setPriority(Thread.NORM_PRIORITY);
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
            return new Thread(rootGroup(), body, name, 0, false);
        }
    }

    /**
     * The root thread group ("system"), which the JDK makes. A thread made without a group joins
     * its creator's: the clock thread, started by the first decision on a worker of an
     * application's own thread group (a subclass, defined by the web application's loader, as a
     * framework's pool may use to handle uncaught exceptions), lived in that group for good, and
     * kept its class and so the application's loader (the redeploy review; Java 17 and 25).
     * Walked up inside {@code doPrivileged}, as {@code getParent} checks access.
     */
    private static ThreadGroup rootGroup() {
        // the creating thread is running, so it has a group
        ThreadGroup group = Thread.currentThread().getThreadGroup();
        for (ThreadGroup parent = group.getParent(); parent != null; parent = parent.getParent()) {
            group = parent;
        }
        return group;
    }
}
