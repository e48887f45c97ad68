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
    public Object newState() {
        return new AtomicLong(Long.MIN_VALUE);
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
                return Outcome.rejected(ceilMillis(ahead - windowNanos));
            }
            if (arrival.compareAndSet(current, next)) {
                return Outcome.allowed((windowNanos - ahead) / intervalNanos);
            }
        }
    }

    private static long ceilMillis(long nanos) {
        return (nanos + 999_999L) / 1_000_000L;
    }

    @Override
    public long retentionMillis() {
        return windowNanos / 1_000_000L;
    }
}
