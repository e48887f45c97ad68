package dev.ratelimit;

/**
 * Threads of the agent's own that an application's thread may cause to start (the clock at the
 * first decision, the Redis store's connector when a call needs a connection).
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
    public static Thread daemon(String name, Runnable body) {
        Thread thread = new Thread(null, body, name, 0, false);
        thread.setDaemon(true);
        thread.setContextClassLoader(AgentThreads.class.getClassLoader());
        return thread;
    }
}
