package dev.ratelimit.limit;

/**
 * A sliding window estimated from two fixed windows: the current window's count plus the
 * previous window's count weighted by how much of it still lies inside the sliding window.
 * Unlike a fixed window it allows no burst of twice the limit across a window boundary.
 *
 * <p>Increment-first as the fixed window: the current window's {@code incrementAndGet} returns
 * the count that decides, with the previous window's weighted count added. The previous window
 * is frozen when the current one starts, and counts at most {@code limit} calls, so attempts
 * rejected in one window do not prolong the penalty into the next.
 */
final class SlidingWindowLimit extends EpochWindowLimit {

    SlidingWindowLimit(long limit, long windowMillis) {
        super(limit, windowMillis, null);
    }

    @Override
    long decide(WindowCounter counter, long count, long now) {
        return decide(count, counter.previous, now - counter.id * windowMillis, limit, windowMillis);
    }

    /**
     * The decision, wherever the counts were kept (here, or in a Redis script).
     *
     * @param count the current window's count after this call
     * @param previousCount the previous window's final count
     * @param elapsed milliseconds since the current window started
     */
    static long decide(long count, long previousCount, long elapsed, long limit, long windowMillis) {
        long into = Math.max(0, Math.min(windowMillis, elapsed));
        long previous = Math.min(previousCount, limit);
        // previous * (window - elapsed) / window, rounded down, in integers
        long carried = previous * (windowMillis - into) / windowMillis;
        long estimate = count + carried;
        if (estimate <= limit) {
            return Outcome.allowed(limit - estimate);
        }
        long toEnd = windowMillis - into;
        if (count <= limit && previous > 0) {
            // wait until previous * (window - t) / window <= limit - count
            long room = limit - count;
            return Outcome.rejected(toEnd - room * windowMillis / previous);
        }
        // next window: this window's calls (capped at limit) carry over; wait until one fits
        return Outcome.rejected(toEnd + windowMillis - (limit - 1) * windowMillis / limit);
    }

    @Override
    public long retentionMillis() {
        return 2 * windowMillis;
    }
}
