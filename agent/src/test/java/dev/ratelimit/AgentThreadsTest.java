package dev.ratelimit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** What an agent's thread takes from the application thread that makes it: nothing. */
class AgentThreadsTest {
    /** A thread group class of an application's own. */
    static final class ApplicationGroup extends ThreadGroup {
        ApplicationGroup() {
            super("application-workers");
        }
    }

    /**
     * A thread made without a group joins its creator's: an agent thread started by a web
     * application's worker lived in the application's group, and kept the group's class (and its
     * loader) for as long as it ran; the clock thread runs for good.
     */
    @Test
    void anAgentThreadMadeOnAnApplicationThreadIsNotInTheApplicationsThreadGroup() throws Exception {
        ApplicationGroup group = new ApplicationGroup();
        Thread[] made = new Thread[1];
        Thread worker = new Thread(group, () -> made[0] = AgentThreads.daemon("rate-limit-agent-test", () -> { }),
                "application-worker");
        worker.start();
        worker.join(10_000);
        ThreadGroup joined = made[0].getThreadGroup();
        assertNotSame(group, joined, "the agent's thread joined the application's thread group");
        assertSame(ThreadGroup.class, joined.getClass(), "a group of the JDK's, not the application's: " + joined);
        assertNull(joined.getParent(), "the root group, which no application made: " + joined);
    }

    /** A new thread takes its creator's priority: not the agent's, whose clock must keep time. */
    @Test
    void anAgentThreadMadeOnALowPriorityThreadHasTheNormalPriority() throws Exception {
        Thread[] made = new Thread[1];
        Thread worker = new Thread(() -> made[0] = AgentThreads.daemon("rate-limit-agent-test", () -> { }),
                "low-priority-worker");
        worker.setPriority(Thread.MIN_PRIORITY);
        worker.start();
        worker.join(10_000);
        assertEquals(Thread.NORM_PRIORITY, made[0].getPriority());
        assertTrue(made[0].isDaemon());
    }
}
