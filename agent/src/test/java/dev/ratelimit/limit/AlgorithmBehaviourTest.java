package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.config.Algorithm;
import dev.ratelimit.testing.ClockWait;
import dev.ratelimit.testing.RefusedBursts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** What each algorithm does over time, with short windows instead of long sleeps. */
class AlgorithmBehaviourTest {

    private static void sleepUntilNextWindowStart(long windowMillis) throws InterruptedException {
        long now = System.currentTimeMillis();
        // a few ms past the boundary, so the coarse clock (a tick behind at most) is in the new window
        Thread.sleep(windowMillis - now % windowMillis + 5);
        // and until it is: a busy machine may keep the clock's thread from ticking for longer
        long next = now / windowMillis + 1;
        ClockWait.until(() -> CoarseClock.millis() / windowMillis >= next, "the next window");
    }

    /**
     * A rule of 2 calls a short window and 5 an hour, and a client sending 10 in each short
     * window: the hour lets 5 through. The calls the short limit refused were counted in the
     * hour, and the client got 2 in all (10 a second under "10 a second and 300 a minute" left
     * it about 30 a minute).
     */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aCallOneLimitRefusesUsesUpNoneOfTheOthers(Algorithm algorithm) throws Exception {
        LocalLimiter limiter = LocalLimiter.create(LimiterConcurrencyTest.rule(algorithm, "arg0", RefusedBursts.LIMITS), 100);
        assertEquals(RefusedBursts.HOURLY_LIMIT, RefusedBursts.allowedInAll(() -> limiter.acquire("k"), Outcome::isAllowed));
    }

    /**
     * A token bucket's refund that comes late, after the bucket had refilled and restarted from
     * a later time, gives nothing back: it once took an interval off whatever time was there, and
     * a bucket of 2 let 3 calls through at once.
     */
    @Test
    void aLateTokenBucketRefundGivesBackNoTokenTheBucketRefilledAlready() {
        TokenBucketLimit bucket = new TokenBucketLimit(2, 1000);
        Object state = bucket.newState(false);
        Object[] counted = new Object[1];
        long t0 = 1_000_000_000L;
        assertTrue(Outcome.isAllowed(bucket.acquireAt(state, t0, counted, 0)));
        // another limit of the rule refused that call; its thread gives the token back 5 s later
        long t1 = t0 + 5_000_000_000L;
        int allowed = 0;
        for (int i = 0; i < 2; i++) {
            allowed += Outcome.isAllowed(bucket.acquireAt(state, t1)) ? 1 : 0;
        }
        bucket.refund(counted[0]);
        for (int i = 0; i < 3; i++) {
            allowed += Outcome.isAllowed(bucket.acquireAt(state, t1)) ? 1 : 0;
        }
        assertEquals(2, allowed, "a full bucket of 2");
        // a refund with nothing in between does give the token back
        TokenBucketLimit fresh = new TokenBucketLimit(2, 1000);
        Object other = fresh.newState(false);
        assertTrue(Outcome.isAllowed(fresh.acquireAt(other, t0, counted, 0)));
        fresh.refund(counted[0]);
        int afterRefund = 0;
        for (int i = 0; i < 3; i++) {
            afterRefund += Outcome.isAllowed(fresh.acquireAt(other, t0)) ? 1 : 0;
        }
        assertEquals(2, afterRefund);
    }

    @Test
    void fixedWindowStartsAfreshInTheNextWindowAndSaysWhenToRetry() throws Exception {
        LocalLimiter limiter = LocalLimiter.create(LimiterConcurrencyTest.rule(Algorithm.FIXED_WINDOW, "arg0",
                "    limit: 3\n    window: 500ms"), 100);
        sleepUntilNextWindowStart(500);
        assertEquals(2, Outcome.remaining(limiter.acquire("k")));
        assertEquals(1, Outcome.remaining(limiter.acquire("k")));
        assertEquals(0, Outcome.remaining(limiter.acquire("k")));
        long rejected = limiter.acquire("k");
        long leftInWindow = 500 - System.currentTimeMillis() % 500;
        assertFalse(Outcome.isAllowed(rejected));
        long retry = Outcome.retryMillis(rejected);
        // never before the window ends (the coarse clock may lag, which only makes retry later),
        // and a reading's lag later than the window's end (so that the agent's clock has reached it)
        long tick = CoarseClock.retryMarginMillis();
        assertTrue(retry >= leftInWindow - 1 + tick && retry <= 500 + tick,
                "retry " + retry + " ms should reach a tick past the window's end, " + leftInWindow + " ms away");
        sleepUntilNextWindowStart(500);
        assertTrue(Outcome.isAllowed(limiter.acquire("k")));
    }

    @Test
    void slidingWindowAllowsNoDoubleBurstAcrossTheBoundary() throws Exception {
        LocalLimiter limiter = LocalLimiter.create(LimiterConcurrencyTest.rule(Algorithm.SLIDING_WINDOW, "arg0",
                "    limit: 10\n    window: 1s"), 100);
        // Each burst must be decided in one window, on the limiter's clock: the late one in the
        // last 150 ms of its second, the early one in the first 100 ms of the next (the previous
        // window weighs 90% or more there: 9 of its 10 calls, room for 1 at most). A stall that
        // pushed a burst past those (a loaded machine) is detected, and the round run again with a
        // new key, at most 10 times
        for (int attempt = 1; ; attempt++) {
            String key = "k" + attempt;
            sleepUntilNextWindowStart(1000);
            Thread.sleep(850);
            long lateSecond = CoarseClock.millis() / 1000;
            int late = 0;
            for (int i = 0; i < 20; i++) {
                late += Outcome.isAllowed(limiter.acquire(key)) ? 1 : 0;
            }
            boolean lateInOneSecond = CoarseClock.millis() / 1000 == lateSecond;
            sleepUntilNextWindowStart(1000);
            int early = 0;
            for (int i = 0; i < 20; i++) {
                early += Outcome.isAllowed(limiter.acquire(key)) ? 1 : 0;
            }
            long earlyEnd = CoarseClock.millis();
            boolean earlyRightAfter = earlyEnd / 1000 == lateSecond + 1 && earlyEnd % 1000 < 100;
            if ((!lateInOneSecond || !earlyRightAfter) && attempt < 10) {
                continue;
            }
            assertEquals(10, late);
            // a fixed window would allow 10 more right after the boundary; the previous window still weighs ~99%
            assertTrue(early <= 1, "allowed " + early + " right after the boundary");
            return;
        }
    }

    @Test
    void fixedWindowAllowsTheDoubleBurstThatSlidingPrevents() throws Exception {
        LocalLimiter limiter = LocalLimiter.create(LimiterConcurrencyTest.rule(Algorithm.FIXED_WINDOW, "arg0",
                "    limit: 10\n    window: 1s"), 100);
        sleepUntilNextWindowStart(1000);
        Thread.sleep(850);
        for (int i = 0; i < 10; i++) {
            assertTrue(Outcome.isAllowed(limiter.acquire("k")));
        }
        sleepUntilNextWindowStart(1000);
        for (int i = 0; i < 10; i++) {
            assertTrue(Outcome.isAllowed(limiter.acquire("k")));
        }
    }

    @Test
    void tokenBucketRefillsEvenly() throws Exception {
        LocalLimiter limiter = LocalLimiter.create(LimiterConcurrencyTest.rule(Algorithm.TOKEN_BUCKET, "arg0",
                "    limit: 10\n    window: 1s"), 100);
        // The eleventh call is refused only if it comes within 100 ms (a token) of the burst, on
        // the limiter's clock: a stall of 100 ms in between (a loaded machine) refills a token.
        // Such a round is detected, and run again with a new key, at most 10 times.
        String key;
        long burst;
        long burstTicks;
        long rejected;
        for (int attempt = 1; ; attempt++) {
            key = "k" + attempt;
            burst = System.nanoTime();
            burstTicks = CoarseClock.nanos();
            for (int i = 0; i < 10; i++) {
                assertTrue(Outcome.isAllowed(limiter.acquire(key)), "burst call " + i);
            }
            rejected = limiter.acquire(key);
            long tookTicks = CoarseClock.nanos() - burstTicks;
            long took = System.nanoTime() - burst;
            if (Math.max(took, tookTicks) < 100_000_000L || attempt >= 10) {
                break;
            }
        }
        assertFalse(Outcome.isAllowed(rejected));
        long retry = Outcome.retryMillis(rejected);
        long tick = CoarseClock.retryMarginMillis();
        assertTrue(retry >= 1 + tick && retry <= 101 + tick, "one token every 100 ms and a tick, retry was " + retry);
        Thread.sleep(250);
        // 250 ms on the limiter's clock too, which a busy machine may keep behind
        long burstEnded = burstTicks;
        ClockWait.until(() -> CoarseClock.nanos() - burstEnded >= 250_000_000L, "250 ms after the burst");
        int refilled = 0;
        for (int i = 0; i < 10; i++) {
            refilled += Outcome.isAllowed(limiter.acquire(key)) ? 1 : 0;
        }
        // one token per 100 ms since the burst: at least 2 after the 250 ms sleep, and no more
        // than the time that really passed allows (a descheduled thread sees more time pass)
        long elapsed = (System.nanoTime() - burst) / 1_000_000;
        assertTrue(refilled >= 2 && refilled <= elapsed / 100 + 1,
                refilled + " tokens after " + elapsed + " ms, one per 100 ms");
    }

    /**
     * A rejected call's retry time reaches a tick past the window's end as the decision saw it:
     * the agent's clock reaches a moment up to a tick after it, so a caller that slept exactly
     * the retry time once found the window not yet over (28 of 40 such callers in a review's run
     * with 10 ms ticks).
     */
    @Test
    void aRetryTimeIncludesTheClocksTick() throws Exception {
        LocalLimiter limiter = LocalLimiter.create(LimiterConcurrencyTest.rule(Algorithm.FIXED_WINDOW, "arg0",
                "    limit: 1\n    window: 10s"), 100);
        for (int attempt = 0; ; attempt++) {
            String key = "k" + attempt;
            long before = CoarseClock.millis();
            limiter.acquire(key);
            long rejected = limiter.acquire(key);
            if (CoarseClock.millis() != before) {
                assertTrue(attempt < 100, "the clock ticked during every attempt");
                continue; // a tick in between: the window's end as the decision saw it is unknown
            }
            long end = before - before % 10_000 + 10_000;
            assertFalse(Outcome.isAllowed(rejected));
            assertEquals(end - before + CoarseClock.retryMarginMillis(), Outcome.retryMillis(rejected));
            // the key is remembered as over the limit until the window's end, not the tick after
            // it: made again in that tick (evicted meanwhile), it would start the next window used up
            assertEquals(end, limiter.penaltyUntil(key));
            return;
        }
    }

    @Test
    void keysAreCountedApart() throws Exception {
        LocalLimiter limiter = LocalLimiter.create(LimiterConcurrencyTest.rule(Algorithm.FIXED_WINDOW, "arg0",
                "    limit: 1\n    window: 1h"), 100);
        assertTrue(Outcome.isAllowed(limiter.acquire("a")));
        assertFalse(Outcome.isAllowed(limiter.acquire("a")));
        assertTrue(Outcome.isAllowed(limiter.acquire("b")));
        assertEquals(2, limiter.trackedKeys());
    }

    /**
     * A client sending twice a sliding window's limit at an even pace is held to the limit in
     * every window. Its rejected calls were counted: they filled each window, were carried into
     * the next, and after the first window the client was never allowed again.
     */
    @Test
    void aClientOverASlidingWindowsLimitGetsTheLimitInEveryWindow() {
        SlidingWindowLimit limit = new SlidingWindowLimit(10, 1000);
        Object state = limit.newState(false);
        long start = 1_700_000_000_000L;
        int[] allowed = new int[6];
        for (long t = 0; t < 6000; t += 50) {
            if (Outcome.isAllowed(limit.acquireAt(state, start + t))) {
                allowed[(int) (t / 1000)]++;
            }
        }
        // the limit in every window: no more, and no fewer (the estimate's rounding lets the
        // client use all of it; test audit, twenty-fourth round: this accepted 9)
        assertArrayEquals(new int[] {10, 10, 10, 10, 10, 10}, allowed, java.util.Arrays.toString(allowed));
    }

    /**
     * A client that waits the retry it was told, and sends nothing else, is allowed then. The
     * retry time left room for the carried calls but not for the retry's own call, so the retry
     * was rejected again, and again.
     */
    @Test
    void aSlidingWindowsRetryIsAllowedWhenItComes() {
        SlidingWindowLimit limit = new SlidingWindowLimit(10, 1000);
        Object state = limit.newState(false);
        long now = 1_700_000_000_000L;
        int retries = 0;
        while (now < 1_700_000_010_000L) {
            long outcome = limit.acquireAt(state, now);
            if (Outcome.isAllowed(outcome)) {
                now += 1;
                continue;
            }
            now += Outcome.retryMillis(outcome);
            assertTrue(Outcome.isAllowed(limit.acquireAt(state, now)), "the retry at " + now + " was rejected");
            retries++;
            now += 1;
        }
        assertTrue(retries > 10, "retries: " + retries);
    }

    /** A limit times a window past a long: the previous window's calls still count, approximately. */
    @Test
    void aSlidingWindowOfAYearAndABillionCallsDoesNotOverflow() {
        long limit = 1_000_000_000L;
        long year = 366L * 24 * 3_600_000;
        long outcome = SlidingWindowLimit.decide(1, limit, 1000, limit, year);
        assertTrue(Outcome.isAllowed(outcome));
        assertTrue(Outcome.remaining(outcome) < 100, "remaining " + Outcome.remaining(outcome));
        assertFalse(Outcome.isAllowed(SlidingWindowLimit.decide(1, limit, 0, limit, year)));
    }
}
