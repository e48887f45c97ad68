package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.testing.StallGuard;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The clock's tick: a thousandth of the shortest window, within 1 to 10 ms, and never coarser
 * again. The clock is static, and other tests in this JVM have made limits already: the tests of
 * its ticking use a copy of the class of their own, in a loader of their own, with its own thread.
 */
class CoarseClockTest {
    private URLClassLoader loader;
    private Class<?> clock;

    @BeforeEach
    void freshClock() throws Exception {
        URL classes = CoarseClock.class.getProtectionDomain().getCodeSource().getLocation();
        loader = new URLClassLoader(new URL[] {classes}, ClassLoader.getPlatformClassLoader());
        clock = Class.forName(CoarseClock.class.getName(), true, loader);
    }

    @AfterEach
    void close() throws Exception {
        loader.close();
    }

    private long call(String name, Object... args) throws Exception {
        for (Method m : clock.getDeclaredMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == args.length) {
                m.setAccessible(true);
                Object result = m.invoke(null, args);
                return result == null ? 0 : (Long) result;
            }
        }
        throw new NoSuchMethodException(name);
    }

    /** How many distinct readings of the copy's clock a reader sees in {@code millis}. */
    private int readingsIn(long millis) throws Exception {
        int readings = 0;
        long last = call("nanos");
        long end = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < end) {
            long now = call("nanos");
            if (now != last) {
                readings++;
                last = now;
            }
            Thread.onSpinWait();
        }
        return readings;
    }

    /**
     * {@link #readingsIn readingsIn(300)} at a tick of 1 ms, which must give at least 60 (one per
     * 5 ms). The machine may stop the clock's thread for most of the 300 ms (a CPU quota spent, on
     * a 2-core CI machine beside other builds): a count under 60 while a watcher thread was kept
     * off the CPU for over 50 ms at once is counted again, at most 3 times in all; the last count
     * is returned, and asserted at the same 60.
     */
    private int fineReadingsIn300Ms() throws Exception {
        // StallGuard takes a result at or under its bound: the readings negated, at or under -60
        return (int) -StallGuard.measure(-60, 3, 50, () -> -readingsIn(300));
    }

    /** The copy's clock thread, or null if it has not started. */
    private Thread ticker() throws ReflectiveOperationException {
        Method method = clock.getDeclaredMethod("ticker");
        method.setAccessible(true);
        return (Thread) method.invoke(null);
    }

    @Test
    void makingLimitsDoesNotStartTheClockThreadTheFirstReadingDoes() throws Exception {
        call("resolve", 60_000L);
        call("resolve", 1_000L);
        assertNull(ticker(), "resolve started the clock thread");
        long before = System.currentTimeMillis();
        long first = call("millis");
        assertTrue(first >= before && first <= System.currentTimeMillis(),
                () -> "the first reading, " + first + ", is not the time it was taken");
        Thread ticker = ticker();
        assertNotNull(ticker, "the first reading did not start the clock thread");
        assertTrue(ticker.isAlive() && ticker.isDaemon());
        assertEquals("rate-limit-agent-clock", ticker.getName());
        // and it ticks at the tick resolved before it started: about 300 readings in 300 ms
        int fine = fineReadingsIn300Ms();
        assertTrue(fine >= 60, () -> fine + " readings in 300 ms at a tick of 1 ms");
        call("nanos");
        assertSame(ticker, ticker(), "a second reading started another thread");
    }

    @Test
    void theTickIsAThousandthOfTheWindowWithinOneToTenMilliseconds() {
        assertEquals(1_000_000L, CoarseClock.tickFor(1));
        assertEquals(1_000_000L, CoarseClock.tickFor(500));
        assertEquals(1_000_000L, CoarseClock.tickFor(1_000));
        assertEquals(2_500_000L, CoarseClock.tickFor(2_500));
        assertEquals(9_999_000L, CoarseClock.tickFor(9_999));
        assertEquals(10_000_000L, CoarseClock.tickFor(10_000));
        assertEquals(10_000_000L, CoarseClock.tickFor(60_000));
        assertEquals(10_000_000L, CoarseClock.tickFor(86_400_000L * 365 * 1_000_000));
        assertEquals(10_000_000L, CoarseClock.tickFor(Long.MAX_VALUE));
    }

    /**
     * The first reading may come from a thread of the application (a request thread): the clock
     * thread it starts holds the clock's own loader as its context loader, not the application's
     * (on an application server, a thread that lives on with the web application's loader pins it).
     */
    @Test
    void theClockThreadStartedByAnApplicationThreadHoldsTheClocksLoader() throws Exception {
        try (URLClassLoader application = new URLClassLoader(new URL[0], null)) {
            Object[] seen = new Object[1];
            Thread request = new Thread(() -> {
                try {
                    call("nanos");
                    seen[0] = ticker().getContextClassLoader();
                } catch (Exception e) {
                    seen[0] = e;
                }
            }, "request-thread");
            request.setContextClassLoader(application);
            request.start();
            request.join(10_000);
            assertSame(loader, seen[0], () -> "the clock thread's context loader is " + seen[0]);
        }
    }

    @Test
    void aShortWindowMakesTheClockTickFinerAndALongOneLeavesIt() throws Exception {
        // a fresh clock ticks every 10 ms: at most about 30 readings in 300 ms (40 with slack)
        assertEquals(10_000_000L, call("tickNanos"));
        int coarse = readingsIn(300);
        assertTrue(coarse <= 40, () -> coarse + " readings in 300 ms at a tick of 10 ms");

        call("resolve", 60_000L);
        assertEquals(10_000_000L, call("tickNanos"));
        call("resolve", 1_000L);
        assertEquals(1_000_000L, call("tickNanos"));
        // about 300 at 1 ms; 60 (one per 5 ms) leaves room for a busy machine, and is well
        // above what a 10 ms tick can give
        int fine = fineReadingsIn300Ms();
        assertTrue(fine >= 60, () -> fine + " readings in 300 ms at a tick of 1 ms");

        call("resolve", 60_000L);
        assertEquals(1_000_000L, call("tickNanos"), "a longer window never makes the tick coarser");
    }

    @Test
    void anInterruptedClockThreadKeepsTickingWithoutSpinning() throws Exception {
        call("resolve", 1_000L);
        call("nanos");
        Thread ticker = ticker();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        ticker.interrupt();
        Thread.sleep(50);
        long cpuBefore = threads.getThreadCpuTime(ticker.getId());
        Thread.sleep(300);
        long cpuNanos = threads.getThreadCpuTime(ticker.getId()) - cpuBefore;
        // a spinning thread burns about all of the 300 ms; a ticking one a few ms
        assertTrue(cpuNanos < 100_000_000L, () -> "the clock thread used " + cpuNanos / 1_000_000 + " ms of CPU in 300 ms");
        int readings = fineReadingsIn300Ms();
        assertTrue(readings >= 60, () -> readings + " readings in 300 ms after an interrupt");
    }
}
