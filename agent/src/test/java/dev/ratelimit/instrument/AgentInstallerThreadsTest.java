package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.net.URLClassLoader;
import org.junit.jupiter.api.Test;

/**
 * The thread that builds the platform MBean server when {@code ManagementFactory} could not be
 * woven is made on whichever thread loaded that class: on an application server, possibly a web
 * application's request thread. Like the agent's other threads it must take nothing of that
 * thread's: not its context class loader, not its inheritable thread-locals (nor, up to Java 23,
 * the protection domains on its stack), or it pins the web application's loader while it runs.
 */
class AgentInstallerThreadsTest {
    private static final InheritableThreadLocal<Object> APPLICATION_SCOPE = new InheritableThreadLocal<>();

    @Test
    void theJmxThreadMadeOnAnApplicationThreadTakesNothingOfIt() throws Exception {
        try (URLClassLoader application = new URLClassLoader(new URL[0], null)) {
            Object[] seen = new Object[4];
            Thread request = new Thread(() -> {
                APPLICATION_SCOPE.set(new Object[] {application});
                Thread jmx = AgentInstaller.jmxThread(() -> {
                    seen[0] = Thread.currentThread().getContextClassLoader();
                    seen[1] = APPLICATION_SCOPE.get();
                });
                seen[2] = jmx.getName();
                seen[3] = jmx.isDaemon();
                jmx.start();
                try {
                    jmx.join(10_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "request-thread");
            request.setContextClassLoader(application);
            request.start();
            request.join(10_000);
            assertEquals("rate-limit-agent-jmx", seen[2]);
            assertEquals(Boolean.TRUE, seen[3], "a daemon, as before");
            assertSame(ClassLoader.getSystemClassLoader(), seen[0],
                    "the JMX thread's context loader is the system loader, not the application thread's");
            assertNull(seen[1], "the JMX thread inherited the application thread's inheritable thread-locals");
            assertTrue(!request.isAlive());
        }
    }
}
