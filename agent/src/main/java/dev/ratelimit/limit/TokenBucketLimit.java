package dev.ratelimit.limit;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A token bucket of {@code limit} tokens refilled evenly over {@code window}, kept as one atomic
 * value: the theoretical arrival time of the next call (the generic cell rate algorithm). A call
 * moves that time one emission interval forward; it is allowed when the result lies no more than
 * the bucket's capacity ({@code limit} intervals) ahead of now. The compare-and-set that
 * publishes the new time is the decision, and a rejected call writes nothing.
 *
 * <p>The interval is the window divided by the limit, rounded <em>up</em> to the clock's unit,
 * and the capacity is exactly {@code limit} of them: a full bucket holds {@code limit} tokens and
 * no more than {@code limit} are refilled per window. (With the interval rounded down and the
 * window as the capacity, {@code limit: 70000} a second let 70,003 calls through at once.)
 */
final class TokenBucketLimit implements LimitAlgorithm {
    private final long capacityNanos;
    private final long intervalNanos;

    TokenBucketLimit(long limit, long windowMillis) {
        long windowNanos = windowMillis * 1_000_000L;
        this.intervalNanos = interval(windowNanos, limit);
        this.capacityNanos = capacity(windowNanos, limit);
    }

    /** The emission interval, in the unit of {@code window}: {@code window / limit}, rounded up. */
    public static long interval(long window, long limit) {
        return Math.max(1, window / limit + (window % limit == 0 ? 0 : 1));
    }

    /**
     * How far ahead of now an allowed call's arrival time may lie, in the unit of {@code window}:
     * {@code limit} intervals. At most {@code window + limit} when {@code limit <= window}, and
     * {@code limit} otherwise, so it cannot overflow.
     */
    public static long capacity(long window, long limit) {
        return limit * interval(window, limit);
    }

    @Override
    public Object newState(boolean exhausted) {
        // an empty bucket: the next token arrives one interval from now
        return new AtomicLong(exhausted ? CoarseClock.nanos() + capacityNanos : Long.MIN_VALUE);
    }

    @Override
    public long acquire(Object state) {
        return acquireAt(state, CoarseClock.nanos());
    }

    @Override
    public long acquire(Object state, Object[] counted, int slot) {
        return acquireAt(state, CoarseClock.nanos(), counted, slot);
    }

    /**
     * Moves the arrival time back the interval the call moved it forward, if no other call has
     * moved it since. Otherwise the call keeps its token: subtracting an interval from a time
     * another call wrote could give back a token the bucket had refilled already (the bucket
     * full again, and restarted from now, while this call's thread waited), one call too many.
     */
    @Override
    public void refund(Object counted) {
        Published call = (Published) counted;
        call.arrival.compareAndSet(call.time, call.time - intervalNanos);
    }

    /** No token left: the next call's arrival time would lie more than the capacity ahead. */
    @Override
    public boolean spent(Object state) {
        long current = ((AtomicLong) state).get();
        return current != Long.MIN_VALUE && current - CoarseClock.nanos() > capacityNanos - intervalNanos;
    }

    /** {@link #acquire} at {@code now} on the monotonic clock; for tests. */
    long acquireAt(Object state, long now) {
        return acquireAt(state, now, null, 0);
    }

    /**
     * {@link #acquire(Object, Object[], int)} at {@code now}; with {@code counted} null, as
     * {@link #acquire(Object)}.
     */
    long acquireAt(Object state, long now, Object[] counted, int slot) {
        AtomicLong arrival = (AtomicLong) state;
        while (true) {
            long current = arrival.get();
            long next = (current == Long.MIN_VALUE || current - now < 0 ? now : current) + intervalNanos;
            long ahead = next - now;
            if (ahead > capacityNanos) {
                return outcome(ahead, capacityNanos, intervalNanos, 1_000_000L);
            }
            if (arrival.compareAndSet(current, next)) {
                if (counted != null) {
                    counted[slot] = new Published(arrival, next);
                }
                return outcome(ahead, capacityNanos, intervalNanos, 1_000_000L);
            }
        }
    }

    /**
     * The decision, wherever the arrival time was kept (here, or in a Redis script): allowed when
     * the next arrival time lies at most the bucket's capacity ahead.
     *
     * @param ahead how far this call's arrival time lies ahead of now
     * @param capacity {@link #capacity}, in the same unit
     * @param unitsPerMilli the time unit of the other arguments: 1,000,000 for nanoseconds
     */
    static long outcome(long ahead, long capacity, long interval, long unitsPerMilli) {
        if (ahead > capacity) {
            return Outcome.rejected((ahead - capacity + unitsPerMilli - 1) / unitsPerMilli);
        }
        return Outcome.allowed((capacity - ahead) / interval);
    }

    /** The arrival time an allowed call wrote, for its refund. */
    private static final class Published {
        final AtomicLong arrival;
        final long time;

        Published(AtomicLong arrival, long time) {
            this.arrival = arrival;
            this.time = time;
        }
    }

    @Override
    public long retentionMillis() {
        // until the bucket is full again
        return (capacityNanos + 999_999L) / 1_000_000L;
    }
}
