package dev.ratelimit.limit;

import java.util.concurrent.locks.LockSupport;

/**
 * A clock read with one volatile load, updated about once a millisecond by one daemon thread.
 *
 * <p>{@code System.nanoTime()} per call costs about as much as the rest of a decision. Window ids
 * use the wall clock ({@link #millis()}) so instances sharing a store agree on window
 * boundaries; Caffeine's ticker and the token bucket use the monotonic {@link #nanos()}.
 *
 * <p>Readings lag real time by at most a tick, so a retry time computed from them is never
 * earlier than the real end of a window.
 */
public final class CoarseClock {
    private static final long TICK_NANOS = 1_000_000L;

    private static volatile long millis = System.currentTimeMillis();
    private static volatile long nanos = System.nanoTime();

    static {
        Thread ticker = new Thread(CoarseClock::tick, "rate-limit-agent-clock");
        ticker.setDaemon(true);
        ticker.start();
    }

    private CoarseClock() {
    }

    private static void tick() {
        while (true) {
            LockSupport.parkNanos(TICK_NANOS);
            millis = System.currentTimeMillis();
            nanos = System.nanoTime();
        }
    }

    /** Wall-clock milliseconds since the epoch, at most about a millisecond old. */
    public static long millis() {
        return millis;
    }

    /** Monotonic nanoseconds (as {@link System#nanoTime()}), at most about a millisecond old. */
    public static long nanos() {
        return nanos;
    }
}
