package dev.ratelimit.limit;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A token bucket of {@code limit} tokens refilled evenly over {@code window}, kept as one atomic
 * value: the theoretical arrival time of the next call (the generic cell rate algorithm). A call
 * moves that time one emission interval forward; it is allowed when the result lies no more than
 * one window ahead of now. The compare-and-set that publishes the new time is the decision, and
 * a rejected call writes nothing.
 */
final class TokenBucketLimit implements LimitAlgorithm {
    private final long windowNanos;
    private final long intervalNanos;

    TokenBucketLimit(long limit, long windowMillis) {
        this.windowNanos = windowMillis * 1_000_000L;
        this.intervalNanos = Math.max(1, windowNanos / limit);
    }

    @Override
    public Object newState(boolean exhausted) {
        // an empty bucket: the next token arrives one interval from now
        return new AtomicLong(exhausted ? CoarseClock.nanos() + windowNanos : Long.MIN_VALUE);
    }

    @Override
    public long acquire(Object state) {
        AtomicLong arrival = (AtomicLong) state;
        long now = CoarseClock.nanos();
        while (true) {
            long current = arrival.get();
            long next = (current == Long.MIN_VALUE || current - now < 0 ? now : current) + intervalNanos;
            long ahead = next - now;
            if (ahead > windowNanos) {
                return outcome(ahead, windowNanos, intervalNanos, 1_000_000L);
            }
            if (arrival.compareAndSet(current, next)) {
                return outcome(ahead, windowNanos, intervalNanos, 1_000_000L);
            }
        }
    }

    /**
     * The decision, wherever the arrival time was kept (here, or in a Redis script): allowed when
     * the next arrival time lies at most one window ahead.
     *
     * @param ahead how far this call's arrival time lies ahead of now
     * @param unitsPerMilli the time unit of the other arguments: 1,000,000 for nanoseconds
     */
    static long outcome(long ahead, long window, long interval, long unitsPerMilli) {
        if (ahead > window) {
            return Outcome.rejected((ahead - window + unitsPerMilli - 1) / unitsPerMilli);
        }
        return Outcome.allowed((window - ahead) / interval);
    }

    @Override
    public long retentionMillis() {
        return windowNanos / 1_000_000L;
    }
}
