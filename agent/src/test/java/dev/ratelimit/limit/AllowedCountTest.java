package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleConfig;
import dev.ratelimit.testing.ClockWait;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Allowed metric is exact: it equals the number of calls that were answered "allowed", for
 * the rules whose limiter counts them from its window counters (one fixed window, any key)
 * and for the rest, across window changes, evictions and expiry, with many threads at once.
 */
class AllowedCountTest {
    private static final int THREADS = 8;
    private static ExecutorService pool;

    @BeforeAll
    static void startThreads() {
        pool = Executors.newFixedThreadPool(THREADS);
    }

    @AfterAll
    static void stopThreads() {
        pool.shutdownNow();
    }

    static ActiveRule rule(String body, long maxKeys) throws Exception {
        RuleConfig config = ConfigLoader.parse("version: 1\nrules:\n  - name: r\n" + body, "t.yaml", Path.of("."),
                name -> null).rules().get(0);
        return new ActiveRule(config, maxKeys);
    }

    /** {@code THREADS} threads released at once, each calling for {@code millis}; the allowed answers. */
    static long hammer(ActiveRule rule, int keys, long millis) throws Exception {
        CountDownLatch ready = new CountDownLatch(THREADS);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<long[]>> results = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            results.add(pool.submit(() -> {
                ready.countDown();
                go.await();
                long allowed = 0;
                long calls = 0;
                long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
                while (System.nanoTime() < end) {
                    Object[] arguments = {"k" + ThreadLocalRandom.current().nextInt(keys)};
                    if (Outcome.isAllowed(rule.decide(arguments, null))) {
                        allowed++;
                    }
                    calls++;
                }
                return new long[] {allowed, calls};
            }));
        }
        ready.await();
        go.countDown();
        long allowed = 0;
        long calls = 0;
        for (Future<long[]> result : results) {
            long[] counts = result.get();
            allowed += counts[0];
            calls += counts[1];
        }
        assertEquals(calls, allowed + rule.metrics().rejected(), "every call is allowed or rejected");
        return allowed;
    }

    @Test
    void oneFixedWindowCountsItsAllowedCallsItselfAndExactly() throws Exception {
        for (int round = 0; round < 20; round++) {
            ActiveRule global = rule("    key: global\n    limit: 50\n    window: 3ms\n", 100_000);
            assertTrue(LocalLimiter.create(global.config(), 100_000).countsAllowed());
            long allowed = hammer(global, 1, 100);
            assertTrue(allowed > 50, "several windows passed: " + allowed);
            assertEquals(allowed, global.metrics().allowed(), "round " + round);
        }
    }

    @Test
    void perKeyWindowsCountFromTheirCountersExactlyThroughEvictionsAndReCreation() throws Exception {
        for (int round = 0; round < 20; round++) {
            // 64 keys through a store of 8: constant eviction, and evicted limited keys come
            // back used up (their counters start at the limit)
            RuleConfig config = rule("    key: arg0\n    limit: 3\n    window: 5ms\n", 8).config();
            LocalLimiter limiter = LocalLimiter.create(config, 8);
            assertTrue(limiter.countsAllowed());
            ActiveRule keyed = new ActiveRule(config, limiter);
            long allowed = hammer(keyed, 64, 100);
            assertTrue(allowed > 0);
            assertEquals(allowed, keyed.metrics().allowed(), "round " + round);
            // once the store's maintenance has handled every removal, each key left, and each
            // state kept after an eviction at its limit, has exactly its current counter open:
            // none leaked by a call racing an eviction
            long tracked = keyed.trackedKeys();
            assertEquals(tracked + limiter.keptKeys(), limiter.openCounters(), "round " + round);
        }
    }

    @Test
    void expiredKeysKeepTheirCount() throws Exception {
        RuleConfig config = rule("    key: arg0\n    limit: 5\n    window: 10ms\n", 1000).config();
        LocalLimiter limiter = LocalLimiter.create(config, 1000);
        ActiveRule keyed = new ActiveRule(config, limiter);
        long allowed = hammer(keyed, 16, 50);
        // 100 ms on the clock the key store reads (the agent's, which a busy machine may keep behind)
        long hammered = CoarseClock.nanos();
        Thread.sleep(100);
        ClockWait.until(() -> CoarseClock.nanos() - hammered >= 100_000_000L, "100 ms after the calls");
        keyed.trackedKeys(); // runs the store's maintenance: every key has expired by now
        assertEquals(0, keyed.trackedKeys());
        assertEquals(0, limiter.openCounters(), "every expired key's counter is retired");
        assertEquals(allowed, keyed.metrics().allowed());
    }

    @Test
    void aKeyRemovedWhileACallStartsANewWindowLeavesNoCounterOpen() throws InterruptedException {
        AllowedTally tally = new AllowedTally(5);
        FixedWindowLimit limit = new FixedWindowLimit(5, 1, tally);
        Object state = limit.newState(false);
        assertTrue(Outcome.isAllowed(limit.acquire(state)));
        assertEquals(1, tally.openCounters());
        // the key leaves the store, but a call that read its state before goes on
        limit.close(state);
        assertEquals(0, tally.openCounters());
        assertEquals(1, tally.allowed());
        long windowOfFirstCall = CoarseClock.millis();
        ClockWait.until(() -> CoarseClock.millis() != windowOfFirstCall, "its next millisecond");
        // a later window: this call installs a counter on the removed state, which must not stay open
        assertTrue(Outcome.isAllowed(limit.acquire(state)));
        assertEquals(0, tally.openCounters());
        assertEquals(2, tally.allowed(), "the call on the removed state still counted");
    }

    @Test
    void otherRulesCountPerCallAndAreExactToo() throws Exception {
        for (String body : List.of(
                "    key: arg0\n    algorithm: sliding-window\n    limit: 3\n    window: 5ms\n",
                "    key: arg0\n    algorithm: token-bucket\n    limit: 3\n    window: 5ms\n",
                "    key: arg0\n    limits:\n      - {limit: 3, window: 5ms}\n      - {limit: 20, window: 50ms}\n",
                "    key: global\n    algorithm: sliding-window\n    limit: 3\n    window: 5ms\n",
                "    key: global\n    limits:\n      - {limit: 3, window: 5ms}\n      - {limit: 20, window: 50ms}\n")) {
            ActiveRule rule = rule(body, 8);
            assertFalse(LocalLimiter.create(rule.config(), 8).countsAllowed(), body);
            long allowed = hammer(rule, 64, 100);
            assertEquals(allowed, rule.metrics().allowed(), body);
        }
    }

    @Test
    void aCallThatIncrementsACounterSealedUnderItIsCountedByTheLimit() {
        // the state as a call finds it when another thread replaced and sealed its window's
        // counter between this call's read of the state and its increment
        // (the clock is held in the middle of one window, so the counter stays the current one)
        long window = 3_600_000;
        long now = 1_700_000_000_000L / window * window + window / 2;
        AllowedTally tally = new AllowedTally(2);
        FixedWindowLimit limit = new FixedWindowLimit(2, window, tally);
        WindowCounter counter = new WindowCounter(now / window, 0, (now / window + 1) * window, 0);
        tally.open(counter);
        EpochWindowLimit.WindowState state = new EpochWindowLimit.WindowState(counter);
        assertTrue(Outcome.isAllowed(limit.acquireAt(state, now)));
        assertEquals(1, tally.allowed());
        tally.retire(counter);
        assertEquals(1, tally.allowed());
        assertEquals(0, tally.openCounters());
        assertTrue(Outcome.isAllowed(limit.acquireAt(state, now)), "the late call is the window's second: allowed");
        assertEquals(2, tally.allowed(), "and counted");
        assertFalse(Outcome.isAllowed(limit.acquireAt(state, now)), "the third is over the limit");
        assertEquals(2, tally.allowed());
    }

    @Test
    void aLateCallOnAReplacedCounterCountsItself() {
        AllowedTally tally = new AllowedTally(2);
        WindowCounter counter = new WindowCounter(1, 0, 10, 0);
        tally.open(counter);
        counter.incrementAndGet();
        assertEquals(1, tally.allowed(), "counted while open");
        tally.retire(counter);
        assertEquals(1, tally.allowed(), "and once retired");
        tally.retire(counter);
        assertEquals(1, tally.allowed(), "sealed once only");
        long late = counter.incrementAndGet() - WindowCounter.SEALED;
        assertEquals(2, late);
        tally.late(counter, late);
        assertEquals(2, tally.allowed());
        long over = counter.incrementAndGet() - WindowCounter.SEALED;
        tally.late(counter, over);
        assertEquals(2, tally.allowed(), "a late call over the limit was rejected, not allowed");
    }
}
