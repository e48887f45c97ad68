package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.config.Algorithm;
import org.junit.jupiter.api.Test;

/** What each algorithm does over time, with short windows instead of long sleeps. */
class AlgorithmBehaviourTest {

    private static void sleepUntilNextWindowStart(long windowMillis) throws InterruptedException {
        long now = System.currentTimeMillis();
        // a few ms past the boundary, so the coarse clock (a tick behind at most) is in the new window
        Thread.sleep(windowMillis - now % windowMillis + 5);
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
        // never before the window ends (the coarse clock may lag, which only makes retry later)
        assertTrue(retry >= leftInWindow - 1 && retry <= 500,
                "retry " + retry + " ms should reach the window's end, " + leftInWindow + " ms away");
        sleepUntilNextWindowStart(500);
        assertTrue(Outcome.isAllowed(limiter.acquire("k")));
    }

    @Test
    void slidingWindowAllowsNoDoubleBurstAcrossTheBoundary() throws Exception {
        LocalLimiter limiter = LocalLimiter.create(LimiterConcurrencyTest.rule(Algorithm.SLIDING_WINDOW, "arg0",
                "    limit: 10\n    window: 1s"), 100);
        sleepUntilNextWindowStart(1000);
        Thread.sleep(850);
        int late = 0;
        for (int i = 0; i < 20; i++) {
            late += Outcome.isAllowed(limiter.acquire("k")) ? 1 : 0;
        }
        assertEquals(10, late);
        sleepUntilNextWindowStart(1000);
        int early = 0;
        for (int i = 0; i < 20; i++) {
            early += Outcome.isAllowed(limiter.acquire("k")) ? 1 : 0;
        }
        // a fixed window would allow 10 more right after the boundary; the previous window still weighs ~99%
        assertTrue(early <= 1, "allowed " + early + " right after the boundary");
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
        long burst = System.nanoTime();
        for (int i = 0; i < 10; i++) {
            assertTrue(Outcome.isAllowed(limiter.acquire("k")), "burst call " + i);
        }
        long rejected = limiter.acquire("k");
        assertFalse(Outcome.isAllowed(rejected));
        long retry = Outcome.retryMillis(rejected);
        assertTrue(retry >= 1 && retry <= 101, "one token every 100 ms, retry was " + retry);
        Thread.sleep(250);
        int refilled = 0;
        for (int i = 0; i < 10; i++) {
            refilled += Outcome.isAllowed(limiter.acquire("k")) ? 1 : 0;
        }
        // one token per 100 ms since the burst: at least 2 after the 250 ms sleep, and no more
        // than the time that really passed allows (a descheduled thread sees more time pass)
        long elapsed = (System.nanoTime() - burst) / 1_000_000;
        assertTrue(refilled >= 2 && refilled <= elapsed / 100 + 1,
                refilled + " tokens after " + elapsed + " ms, one per 100 ms");
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
}
