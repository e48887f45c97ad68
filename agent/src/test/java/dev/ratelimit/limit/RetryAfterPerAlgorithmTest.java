package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The README's paragraph on Retry-After, per algorithm, with {@code limit: 2, window: 1m} spent at
 * once 10 s into a window: what the rejection says, and when a retry first passes.
 */
class RetryAfterPerAlgorithmTest {
    private static final long WINDOW = 60_000;

    /** Token bucket: the next token, 30 s; a retry passes then and not a millisecond before. */
    @Test
    void aTokenBucketsRetryIsTheNextToken() {
        TokenBucketLimit bucket = new TokenBucketLimit(2, WINDOW);
        Object state = bucket.newState(false);
        long t0 = 1_000_000_000_000L;
        assertTrue(Outcome.isAllowed(bucket.acquireAt(state, t0)));
        assertTrue(Outcome.isAllowed(bucket.acquireAt(state, t0)));
        long third = bucket.acquireAt(state, t0);
        assertFalse(Outcome.isAllowed(third));
        assertEquals(30_000, Outcome.retryMillis(third));
        assertFalse(Outcome.isAllowed(bucket.acquireAt(state, t0 + 29_999_000_000L)));
        assertTrue(Outcome.isAllowed(bucket.acquireAt(state, t0 + 30_000_000_000L)));
    }

    /**
     * Sliding window: the rejection says 80 s (the README's example), but the carried share of
     * the previous window is rounded down (here and in sliding-window.lua), so a retry 1 ms after
     * the window's end, 50 s on, passes: Retry-After is a time a retry passes by, not the first.
     */
    @Test
    void aSlidingWindowsRetryIsLaterThanTheFirstThatPasses() {
        long third = SlidingWindowLimit.decide(3, 0, 10_000, 2, WINDOW);
        assertFalse(Outcome.isAllowed(third));
        assertEquals(80_000, Outcome.retryMillis(third));
        // the next window, 1 ms in: its own count 1, the previous window's 2 carried as 2 * 59999 / 60000 = 1
        assertTrue(Outcome.isAllowed(SlidingWindowLimit.decide(1, 2, 1, 2, WINDOW)),
                "a retry 50.001 s after the rejection passes, 30 s before its Retry-After");
        // and within the window a rejected call told 'the window's end' passes 30 s into it
        long inWindow = SlidingWindowLimit.decide(2, 2, 1, 2, WINDOW);
        assertFalse(Outcome.isAllowed(inWindow));
        assertEquals(59_999, Outcome.retryMillis(inWindow));
        assertTrue(Outcome.isAllowed(SlidingWindowLimit.decide(2, 2, 30_001, 2, WINDOW)),
                "2 * 29999 / 60000 = 0 carried: passes at 30 s, told 60 s");
    }
}
