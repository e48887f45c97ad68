package dev.ratelimit.testing;

import java.util.concurrent.TimeUnit;

/**
 * Tells a timed step that the machine stalled under it. A daemon thread sleeps 1 ms at a time and
 * keeps the longest gap between its wake-ups; when a step took longer than its bound and the gap
 * was long too, the machine stopped the test's threads (another build, a GC of the whole
 * machine's neighbour, a CPU quota), not the code under test. Such a step is measured again; the
 * bound itself never changes.
 *
 * <pre>{@code
 * long took = StallGuard.measure(350, 3, 100, () -> timed(...));   // the last attempt counts
 * assertTrue(took <= 350, ...);
 * }</pre>
 */
public final class StallGuard implements AutoCloseable {
    private final Thread watcher;
    private volatile long longestGapNanos;
    private volatile boolean running = true;

    private StallGuard() {
        watcher = new Thread(this::watch, "stall-guard");
        watcher.setDaemon(true);
    }

    /** Starts watching. */
    public static StallGuard start() {
        StallGuard guard = new StallGuard();
        guard.watcher.start();
        return guard;
    }

    private void watch() {
        long last = System.nanoTime();
        while (running) {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            longestGapNanos = Math.max(longestGapNanos, now - last);
            last = now;
        }
    }

    /** The longest gap between the watcher's wake-ups so far, in ms. */
    public long longestGapMillis() {
        return TimeUnit.NANOSECONDS.toMillis(longestGapNanos);
    }

    /** Whether the watcher was kept off the CPU for more than {@code millis} at once. */
    public boolean stalledOver(long millis) {
        return longestGapMillis() > millis;
    }

    @Override
    public void close() {
        running = false;
        watcher.interrupt();
    }

    /** A step that returns what it measured (a duration in ms, usually). */
    @FunctionalInterface
    public interface Step {
        long run() throws Exception;
    }

    /**
     * Runs {@code step} and returns what it measured. When that is over {@code bound} and the
     * machine stalled for more than {@code stallMillis} during the step, the step runs again (at
     * most {@code attempts} times in all; it must be repeatable). The last attempt's result is
     * returned whatever happened in it, so a step that is slow for a reason of its own still fails
     * the caller's assertion of the same bound.
     */
    public static long measure(long bound, int attempts, long stallMillis, Step step) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try (StallGuard guard = start()) {
                long result = step.run();
                if (result <= bound || attempt >= attempts || !guard.stalledOver(stallMillis)) {
                    return result;
                }
            }
        }
    }
}
