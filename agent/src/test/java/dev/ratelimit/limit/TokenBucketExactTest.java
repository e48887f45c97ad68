package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.testing.Race;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/**
 * A token bucket lets exactly {@code limit} calls through at once and refills no more than
 * {@code limit} per window, also when the window is not a whole multiple of the limit in the
 * clock's unit. With the interval rounded down and the window as the capacity, {@code limit:
 * 70000} a second let 70,003 through at once, and Redis's microsecond clock let 1,501 of 1,500.
 */
class TokenBucketExactTest {
    private static final long NOW = 1_000_000_000_000L;
    private static final long SECOND_NANOS = 1_000_000_000L;

    private static int allowedAt(TokenBucketLimit limit, Object state, long now, int calls) {
        int allowed = 0;
        for (int i = 0; i < calls; i++) {
            allowed += Outcome.isAllowed(limit.acquireAt(state, now)) ? 1 : 0;
        }
        return allowed;
    }

    @Test
    void aFullBucketHoldsExactlyTheLimitWhenTheWindowIsNoMultipleOfIt() {
        for (long limitCount : new long[] {7, 3000, 70_000, 123_457}) {
            TokenBucketLimit limit = new TokenBucketLimit(limitCount, 1000);
            Object state = limit.newState(false);
            assertEquals(limitCount, allowedAt(limit, state, NOW, (int) limitCount + 50), "limit " + limitCount);
        }
    }

    @Test
    void noMoreThanTheLimitIsRefilledPerWindow() {
        TokenBucketLimit limit = new TokenBucketLimit(70_000, 1000);
        Object state = limit.newState(false);
        assertEquals(70_000, allowedAt(limit, state, NOW, 70_010));
        int refilled = allowedAt(limit, state, NOW + SECOND_NANOS, 70_010);
        // one every ceil(10^9 / 70,000) = 14,286 ns: 69,998 in a second
        assertEquals(SECOND_NANOS / 14_286, refilled);
        long rejected = limit.acquireAt(state, NOW + SECOND_NANOS);
        assertFalse(Outcome.isAllowed(rejected));
        assertTrue(Outcome.retryMillis(rejected) >= 1, "a retry time is given");
    }

    @Test
    void anExhaustedNewStateIsEmpty() {
        TokenBucketLimit limit = new TokenBucketLimit(3, 1000);
        Object state = limit.newState(true);
        long rejected = limit.acquire(state);
        assertFalse(Outcome.isAllowed(rejected));
    }

    /** The Redis script's decision, in microseconds: 1,500 a second allows 1,500 calls made at one instant. */
    @Test
    void theMicrosecondDecisionAllowsExactlyTheLimit() {
        long window = 1_000_000;
        long limitCount = 1500;
        long capacity = Decisions.tokenBucketCapacity(window, limitCount);
        long interval = Decisions.tokenBucketInterval(window, limitCount);
        assertEquals(667, interval);
        int allowed = 0;
        for (long k = 1; k <= limitCount + 10; k++) {
            // the k-th call at one instant lies k intervals ahead, as the script computes it
            allowed += Outcome.isAllowed(Decisions.tokenBucketMicros(k * interval, capacity, interval)) ? 1 : 0;
        }
        assertEquals(limitCount, allowed);
        assertEquals(0, Outcome.remaining(Decisions.tokenBucketMicros(limitCount * interval, capacity, interval)));
        assertEquals(limitCount - 1, Outcome.remaining(Decisions.tokenBucketMicros(interval, capacity, interval)));
    }

    /**
     * The Redis script's retry time, in microseconds turned into milliseconds: 2 a minute, a third
     * call at once is one interval (30 s) over the capacity, and is told to retry in 30 s; a part
     * of a millisecond is rounded up. (Review of the tests: the Redis token bucket's retry was
     * asserted only as at most a minute, so a unit slip that told clients 1 ms passed every test.)
     */
    @Test
    void theMicrosecondDecisionSaysWhenTheNextTokenComes() {
        long window = 60_000_000;
        long capacity = Decisions.tokenBucketCapacity(window, 2);
        long interval = Decisions.tokenBucketInterval(window, 2);
        long rejected = Decisions.tokenBucketMicros(3 * interval, capacity, interval);
        assertFalse(Outcome.isAllowed(rejected));
        assertEquals(30_000, Outcome.retryMillis(rejected));
        assertEquals(30_000, Outcome.retryMillis(Decisions.tokenBucketMicros(3 * interval - 1, capacity, interval)),
                "a part of a millisecond is rounded up");
        assertEquals(1, Outcome.retryMillis(Decisions.tokenBucketMicros(capacity + 1, capacity, interval)));
    }

    @Test
    void theCapacityCannotOverflow() {
        long window366DaysNanos = 366L * 24 * 3600 * SECOND_NANOS;
        assertEquals(Long.MAX_VALUE, TokenBucketLimit.capacity(window366DaysNanos, Long.MAX_VALUE));
        assertEquals(1, TokenBucketLimit.interval(window366DaysNanos, Long.MAX_VALUE));
        long capacity = TokenBucketLimit.capacity(window366DaysNanos, 7);
        assertTrue(capacity >= window366DaysNanos && capacity < window366DaysNanos + 7, "capacity " + capacity);
    }

    /** Many threads released at once on a full bucket of a limit the window does not divide: exactly the limit pass, every round. */
    @Test
    void racingCallsOnAFullBucketLetExactlyTheLimitThrough() throws Exception {
        int threads = 8;
        long limitCount = 3001;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < 50; round++) {
                TokenBucketLimit limit = new TokenBucketLimit(limitCount, 3_600_000);
                Object state = limit.newState(false);
                assertEquals(limitCount, Race.sum(pool, threads, thread -> allowedAt(limit, state, NOW, 500)),
                        "round " + round);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
