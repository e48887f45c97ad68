package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The wall clock decides where windows start, and it can step back (an NTP step, a restored VM
 * snapshot). A key must then count in the window holding the new time, not stay held to a window
 * that ends hours away; a counter one window ahead (another thread read the clock a tick later)
 * is still shared.
 */
class ClockStepTest {
    private static final long WINDOW = 1_000;
    /** The middle of a window. */
    private static final long T = 1_700_000_000_500L;

    @Test
    void aFixedWindowCountsInTheWindowHoldingTheTimeTheClockSteppedBackTo() {
        FixedWindowLimit limit = new FixedWindowLimit(2, WINDOW, null);
        Object state = limit.newState(false);
        assertTrue(Outcome.isAllowed(limit.acquireAt(state, T)));
        assertTrue(Outcome.isAllowed(limit.acquireAt(state, T)));
        assertFalse(Outcome.isAllowed(limit.acquireAt(state, T)));
        long back = T - 3_600_000;
        assertEquals(1, Outcome.remaining(limit.acquireAt(state, back)), "a fresh window, not an hour's lock-out");
        assertEquals(0, Outcome.remaining(limit.acquireAt(state, back)));
        long rejected = limit.acquireAt(state, back);
        assertFalse(Outcome.isAllowed(rejected));
        assertEquals(500, Outcome.retryMillis(rejected), "retry at the end of the window holding now, T's middle");
    }

    @Test
    void aSlidingWindowCountsInTheWindowHoldingTheTimeTheClockSteppedBackTo() {
        SlidingWindowLimit limit = new SlidingWindowLimit(2, WINDOW);
        Object state = limit.newState(false);
        limit.acquireAt(state, T);
        limit.acquireAt(state, T);
        assertFalse(Outcome.isAllowed(limit.acquireAt(state, T)));
        long rejected = limit.acquireAt(state, T - 3_600_000);
        assertTrue(Outcome.isAllowed(rejected), "retry was " + Outcome.retryMillis(rejected) + " ms");
    }

    @Test
    void aCounterOfTheNextWindowIsSharedByACallThatReadTheClockATickEarlier() {
        FixedWindowLimit limit = new FixedWindowLimit(2, WINDOW, null);
        Object state = limit.newState(false);
        long lastOfWindow = T - T % WINDOW + WINDOW - 1;
        assertEquals(1, Outcome.remaining(limit.acquireAt(state, lastOfWindow + 1)));
        // read the clock a tick before the other thread: counts in the same, newer counter
        assertEquals(0, Outcome.remaining(limit.acquireAt(state, lastOfWindow)));
        assertFalse(Outcome.isAllowed(limit.acquireAt(state, lastOfWindow + 1)));
    }

    /**
     * A sliding window whose counter is of the window after now's: a call it refuses is told to
     * retry when that window can take it, counted from now, not from that window's start (a
     * retry too soon by the gap, as after a Redis failover to a replica a little behind).
     */
    @Test
    void aSlidingWindowAheadOfTheClockGivesARetryFromNow() {
        long window = 1_000;
        // 5 of 5 in the window ahead, which starts 100 ms from now; nothing carried
        long ahead = SlidingWindowLimit.decide(6, 0, -100, 5, window);
        long current = SlidingWindowLimit.decide(6, 0, 0, 5, window);
        assertFalse(Outcome.isAllowed(ahead));
        assertEquals(Outcome.retryMillis(current) + 100, Outcome.retryMillis(ahead));
        // the previous window, carried at full weight, leaves room only as it slides out
        long carried = SlidingWindowLimit.decide(3, 4, -100, 5, window);
        assertEquals(Outcome.retryMillis(SlidingWindowLimit.decide(3, 4, 0, 5, window)) + 100,
                Outcome.retryMillis(carried));
    }

    @Test
    void aNewKeyStartsAtAnyTime() {
        FixedWindowLimit limit = new FixedWindowLimit(1, WINDOW, null);
        assertTrue(Outcome.isAllowed(limit.acquireAt(limit.newState(false), T)));
        assertTrue(Outcome.isAllowed(limit.acquireAt(limit.newState(false), 0)));
        assertTrue(Outcome.isAllowed(limit.acquireAt(limit.newState(false), Long.MAX_VALUE / 2)));
    }
}
