package dev.ratelimit.limit;

import java.util.concurrent.atomic.AtomicReference;

/**
 * A sliding window estimated from two fixed windows: the current window's count plus the
 * previous window's count weighted by how much of it still lies inside the sliding window.
 * Unlike a fixed window it allows no burst of twice the limit across a window boundary.
 *
 * <p>Increment-first as the fixed window: the current window's {@code incrementAndGet} returns
 * the count that decides. The previous window is frozen when the current one starts, and counts
 * at most {@code limit} calls, so attempts rejected in one window do not prolong the penalty
 * into the next.
 */
final class SlidingWindowLimit implements LimitAlgorithm {
    private final long limit;
    private final long windowMillis;

    SlidingWindowLimit(long limit, long windowMillis) {
        this.limit = limit;
        this.windowMillis = windowMillis;
    }

    @Override
    public Object newState() {
        return new AtomicReference<>(new WindowCounter(Long.MIN_VALUE, 0));
    }

    @Override
    @SuppressWarnings("unchecked")
    public long acquire(Object state) {
        long now = CoarseClock.millis();
        long windowId = now / windowMillis;
        WindowCounter counter = WindowCounter.current((AtomicReference<WindowCounter>) state, windowId);
        long count = counter.incrementAndGet();
        long start = counter.id * windowMillis;
        long elapsed = Math.max(0, Math.min(windowMillis, now - start));
        long previous = Math.min(counter.previous, limit);
        // previous * (window - elapsed) / window, rounded down, in integers
        long carried = previous * (windowMillis - elapsed) / windowMillis;
        long estimate = count + carried;
        if (estimate <= limit) {
            return Outcome.allowed(limit - estimate);
        }
        return Outcome.rejected(retryMillis(count, previous, start, now));
    }

    private long retryMillis(long count, long previous, long start, long now) {
        long end = start + windowMillis;
        if (count <= limit && previous > 0) {
            // wait until previous * (end - t) / window <= limit - count
            long room = limit - count;
            long t = end - room * windowMillis / previous;
            return Math.max(1, t - now);
        }
        // next window: this window's calls (capped at limit) carry over; wait until one fits
        long carriedAtMost = limit - 1;
        long t = end + windowMillis - carriedAtMost * windowMillis / limit;
        return Math.max(1, t - now);
    }

    @Override
    public long retentionMillis() {
        return 2 * windowMillis;
    }
}
