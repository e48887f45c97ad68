package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.testing.Race;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The wall clock decides where windows start, and it can step back (an NTP step, a restored VM
 * snapshot). A key must then count in the window holding the new time, not stay held to a window
 * that ends hours away; a counter one window ahead (another thread read the clock a tick later)
 * is still shared. A call whose own reading is old (its thread was held up while others moved
 * the key on) is not a clock stepped back: the limits' clock, read again, tells them apart; here
 * it is the test's {@code clock}, which the agent's clock would read at that moment.
 */
class ClockStepTest {
    private static final long WINDOW = 1_000;
    /** The middle of a window. */
    private static final long T = 1_700_000_000_500L;

    private final AtomicLong clock = new AtomicLong(T);

    @Test
    void aFixedWindowCountsInTheWindowHoldingTheTimeTheClockSteppedBackTo() {
        FixedWindowLimit limit = new FixedWindowLimit(2, WINDOW, null, clock::get);
        Object state = limit.newState(false);
        assertTrue(Outcome.isAllowed(limit.acquireAt(state, T)));
        assertTrue(Outcome.isAllowed(limit.acquireAt(state, T)));
        assertFalse(Outcome.isAllowed(limit.acquireAt(state, T)));
        long back = T - 3_600_000;
        clock.set(back);
        assertEquals(1, Outcome.remaining(limit.acquireAt(state, back)), "a fresh window, not an hour's lock-out");
        assertEquals(0, Outcome.remaining(limit.acquireAt(state, back)));
        long rejected = limit.acquireAt(state, back);
        assertFalse(Outcome.isAllowed(rejected));
        assertEquals(500, Outcome.retryMillis(rejected), "retry at the end of the window holding now, T's middle");
    }

    @Test
    void aSlidingWindowCountsInTheWindowHoldingTheTimeTheClockSteppedBackTo() {
        SlidingWindowLimit limit = new SlidingWindowLimit(2, WINDOW, clock::get);
        Object state = limit.newState(false);
        limit.acquireAt(state, T);
        limit.acquireAt(state, T);
        assertFalse(Outcome.isAllowed(limit.acquireAt(state, T)));
        clock.set(T - 3_600_000);
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

    /**
     * A call whose thread read the clock, then was held up for two windows or more while other
     * calls moved the key on: its reading is not a clock stepped back. The key's live counter was
     * replaced by one of the call's old window, and the next call, on the clock as it read, by a
     * fresh one: a window of 1 ms under load let 4 calls through against a limit of 2, 50 times in
     * 8 s (the algorithm review). The call counts in the live window, and is decided on the clock
     * as it reads now.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aCallWhoseReadingIsTwoWindowsOldCountsInTheLiveWindow(boolean sliding) {
        EpochWindowLimit limit = sliding ? new SlidingWindowLimit(2, WINDOW, clock::get)
                : new FixedWindowLimit(2, WINDOW, null, clock::get);
        Object state = limit.newState(false);
        long old = T - 2 * WINDOW;
        int allowed = 0;
        for (int i = 0; i < 3; i++) {
            allowed += Outcome.isAllowed(limit.acquireAt(state, T)) ? 1 : 0;
        }
        long late = limit.acquireAt(state, old);
        assertFalse(Outcome.isAllowed(late), "the old reading was handed a fresh window");
        // a retry from the window the clock reads now, not from the old reading (2 windows more)
        assertTrue(Outcome.retryMillis(late) <= WINDOW, "retry " + Outcome.retryMillis(late) + " ms");
        for (int i = 0; i < 3; i++) {
            allowed += Outcome.isAllowed(limit.acquireAt(state, T)) ? 1 : 0;
        }
        assertEquals(2, allowed, "the live window's count was lost");
        // older still, and a reading of the window before: the same
        assertFalse(Outcome.isAllowed(limit.acquireAt(state, T - 3_600_000)));
        assertFalse(Outcome.isAllowed(limit.acquireAt(state, T - WINDOW)));
        assertFalse(Outcome.isAllowed(limit.acquireAt(state, T)));
    }

    /**
     * The same, under contention: 100 threads released at once on a key whose live window has
     * one call, every other thread with a reading two windows old. Exactly the limit passes, in
     * every round.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void oldReadingsInABurstLetExactlyTheLimitThrough(boolean sliding) throws Exception {
        EpochWindowLimit limit = sliding ? new SlidingWindowLimit(5, WINDOW, clock::get)
                : new FixedWindowLimit(5, WINDOW, null, clock::get);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(100);
        try {
            List<Integer> wrong = new ArrayList<>();
            for (int round = 0; round < 200; round++) {
                Object state = limit.newState(false);
                assertTrue(Outcome.isAllowed(limit.acquireAt(state, T)));
                int passed = Race.sum(pool, 100,
                        thread -> Outcome.isAllowed(limit.acquireAt(state, thread % 2 == 0 ? T - 2 * WINDOW : T)) ? 1 : 0);
                if (passed != 4) {
                    wrong.add(passed);
                }
            }
            assertEquals(List.of(), wrong, "calls passed beside the first, in the rounds that were not exactly 4");
        } finally {
            pool.shutdownNow();
        }
    }

    /** The clock read again has moved on past the live window: the call counts in its own window. */
    @Test
    void aCallWhoseReadingIsOldWhileTheClockMovedOnCountsInTheWindowTheClockReads() {
        FixedWindowLimit limit = new FixedWindowLimit(2, WINDOW, null, clock::get);
        Object state = limit.newState(false);
        assertTrue(Outcome.isAllowed(limit.acquireAt(state, T)));
        assertTrue(Outcome.isAllowed(limit.acquireAt(state, T)));
        clock.set(T + 5 * WINDOW);
        assertEquals(1, Outcome.remaining(limit.acquireAt(state, T - 2 * WINDOW)), "a call in the window the clock reads");
        assertEquals(0, Outcome.remaining(limit.acquireAt(state, T + 5 * WINDOW)));
        assertFalse(Outcome.isAllowed(limit.acquireAt(state, T + 5 * WINDOW)));
    }

    @Test
    void aNewKeyStartsAtAnyTime() {
        FixedWindowLimit limit = new FixedWindowLimit(1, WINDOW, null);
        assertTrue(Outcome.isAllowed(limit.acquireAt(limit.newState(false), T)));
        assertTrue(Outcome.isAllowed(limit.acquireAt(limit.newState(false), 0)));
        assertTrue(Outcome.isAllowed(limit.acquireAt(limit.newState(false), Long.MAX_VALUE / 2)));
    }
}
