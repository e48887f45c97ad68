package dev.ratelimit.limit;

/**
 * How each algorithm turns the result of its atomic update into an {@link Outcome}, for stores
 * that do the update elsewhere (a Redis script) and hand back the numbers. The same functions
 * decide local calls, so both stores answer alike.
 */
public final class Decisions {
    private Decisions() {
    }

    /** Fixed window: {@code count} is the window's count after this call. */
    public static long fixedWindow(long count, long limit, long millisLeftInWindow) {
        return count <= limit ? Outcome.allowed(limit - count) : Outcome.rejected(millisLeftInWindow);
    }

    /** Sliding window; see {@code SlidingWindowLimit}. */
    public static long slidingWindow(long count, long previousCount, long elapsedMillis, long limit, long windowMillis) {
        return SlidingWindowLimit.decide(count, previousCount, elapsedMillis, limit, windowMillis);
    }

    /** Token bucket, in microseconds; see {@code TokenBucketLimit}. */
    public static long tokenBucketMicros(long aheadMicros, long capacityMicros, long intervalMicros) {
        return TokenBucketLimit.outcome(aheadMicros, capacityMicros, intervalMicros, 1000L);
    }

    /** A token bucket's emission interval: {@code window / limit} rounded up, in the unit of {@code window}. */
    public static long tokenBucketInterval(long window, long limit) {
        return TokenBucketLimit.interval(window, limit);
    }

    /** A token bucket's capacity: {@code limit} intervals, in the unit of {@code window}. */
    public static long tokenBucketCapacity(long window, long limit) {
        return TokenBucketLimit.capacity(window, limit);
    }
}
