package dev.ratelimit.limit;

import dev.ratelimit.AgentThreads;
import java.util.concurrent.locks.LockSupport;

/**
 * A clock read with one volatile load, updated by one daemon thread every tick.
 *
 * <p>{@code System.nanoTime()} per call costs about as much as the rest of a decision. Window ids
 * use the wall clock ({@link #millis()}) so instances sharing a store agree on window
 * boundaries; Caffeine's ticker and the token bucket use the monotonic {@link #nanos()}.
 *
 * <p>Readings lag real time by at most a tick, so a retry time computed from them is never
 * earlier than the real end of a window. A tick is a thousandth of the shortest window of any
 * limit made in this JVM ({@link #resolve}), at least 1 ms and at most 10 ms: a window's edges
 * move by about 0.1% of it at most (by about 1 ms for windows under a second), and by more only
 * when the machine is too busy to wake this thread on time. A thread that wakes every
 * millisecond costs a served request about 1% of its CPU on a two-core machine
 * (benchmarks/README.md); rules of 10 s and longer wake it a tenth as often. The tick never grows
 * again: a rule removed leaves it as fine as it was. The thread starts at the first reading.
 */
public final class CoarseClock {
    static final long MIN_TICK_NANOS = 1_000_000L;
    static final long MAX_TICK_NANOS = 10_000_000L;

    private static volatile long tickNanos = MAX_TICK_NANOS;
    /** The clock thread, once {@link Readings} has started it; until then, null. */
    private static volatile Thread ticker;

    private CoarseClock() {
    }

    /**
     * The readings, and the thread that updates them, started by the first reading: making
     * limits ({@link #resolve}) does not start it, so a JVM whose rules decide nothing yet (an
     * application still starting) has no thread waking every tick (39 to 50 ms of CPU in a
     * six-second start of the demo; benchmarks/README.md, seventeenth and eighteenth rounds).
     * Once initialized, a reading is one volatile load: the JIT drops the class-initialization
     * check.
     */
    private static final class Readings {
        static volatile long millis = System.currentTimeMillis();
        static volatile long nanos = System.nanoTime();

        static {
            // the first reading may come from any thread of the application (a request thread),
            // and the clock thread never stops: it must take nothing of that thread's
            Thread thread = AgentThreads.daemon("rate-limit-agent-clock", CoarseClock::tick);
            // published before it starts: a resolve that does not see it has lowered the tick
            // before the thread's first park reads it
            ticker = thread;
            thread.start();
        }

        private Readings() {
        }
    }

    private static void tick() {
        while (true) {
            // an interrupt (a host that interrupts every thread) would make every park return at
            // once, and this loop spin: it is not for this thread, which never stops
            Thread.interrupted();
            LockSupport.parkNanos(tickNanos);
            Readings.millis = System.currentTimeMillis();
            Readings.nanos = System.nanoTime();
        }
    }

    /**
     * Keeps readings within a thousandth of {@code windowMillis} (within 1 to 10 ms), from the
     * next reading on. Called for every limit made; does not start the clock thread.
     */
    public static void resolve(long windowMillis) {
        long wanted = tickFor(windowMillis);
        if (wanted >= tickNanos) {
            return;
        }
        synchronized (CoarseClock.class) {
            if (wanted < tickNanos) {
                tickNanos = wanted;
                // the ticker reads the clock at once, then ticks at the new length (only it
                // writes the readings, so they never go back)
                Thread running = ticker;
                if (running != null) {
                    LockSupport.unpark(running);
                }
            }
        }
    }

    /** A thousandth of the window, within 1 to 10 ms, in nanoseconds. */
    static long tickFor(long windowMillis) {
        // a thousandth of a millisecond is a microsecond: 1,000 ns per millisecond of window
        return windowMillis >= MAX_TICK_NANOS / 1_000L ? MAX_TICK_NANOS
                : Math.max(MIN_TICK_NANOS, windowMillis * 1_000L);
    }

    /** The current tick, in nanoseconds. */
    static long tickNanos() {
        return tickNanos;
    }

    /**
     * The current tick in whole milliseconds, rounded up: the most a reading lags the time it
     * stands for (the tick only ever gets finer), unless the machine is too busy to wake the
     * clock's thread on time.
     */
    public static long tickMillis() {
        return (tickNanos + 999_999L) / 1_000_000L;
    }

    /**
     * What a retry time adds so that a caller who waits exactly that long finds the clock past
     * the moment it was told: the most a reading lags real time while the clock's thread keeps
     * time. That is a tick, plus the park's overshoot (a park of 1 ms lasts 1.05 to 1.1 ms on an
     * idle Linux machine), plus the millisecond {@code currentTimeMillis} truncates: one tick
     * added, 2 to 4 of 100 callers who waited exactly their retry time were refused again (the
     * review of the limit algorithms, thirty-fourth round). Two milliseconds cover an overshoot
     * of up to one; a machine too busy to wake the thread that soon is beyond any margin.
     */
    public static long retryMarginMillis() {
        return tickMillis() + 2;
    }

    /** The clock thread, or null before the first reading. */
    static Thread ticker() {
        return ticker;
    }

    /** Wall-clock milliseconds since the epoch, at most a tick old. */
    public static long millis() {
        return Readings.millis;
    }

    /** Monotonic nanoseconds (as {@link System#nanoTime()}), at most a tick old. */
    public static long nanos() {
        return Readings.nanos;
    }
}
