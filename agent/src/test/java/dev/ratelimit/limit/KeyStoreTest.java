package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.testing.ClockWait;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The bounded key store reads present keys quietly and records their use only now and then: a
 * key in use must still never expire, and an idle one must.
 */
class KeyStoreTest {

    @Test
    void aKeyInUseKeepsItsStateFarBeyondTheRetention() throws Exception {
        // a retention of 100 ms: with 20 ms, a stall of the test's thread over about 22 ms (a
        // loaded machine) expired the key between two calls, which is not what this tests. A
        // stall of 80 ms or more between two calls (on the wall clock or on the store's, the
        // agent's clock) is too close to the retention to say anything: that run is started
        // again with a fresh store, at most 10 times
        for (int attempt = 1; ; attempt++) {
            AtomicInteger created = new AtomicInteger();
            // recorded, not thrown: Caffeine catches and logs what a removal listener throws
            List<Object[]> removed = new CopyOnWriteArrayList<>();
            KeyStore store = KeyStore.local(1000, 100, exhausted -> {
                created.incrementAndGet();
                return new Object[] {new Object()};
            }, removed::add, state -> false);
            Object[] first = store.state("k");
            long gapNanos = 0;
            long lastNanos = System.nanoTime();
            long lastTicks = CoarseClock.nanos();
            long end = lastNanos + TimeUnit.MILLISECONDS.toNanos(2000);
            while (System.nanoTime() < end) {
                // twenty retentions, one call every millisecond or so
                Object[] state = store.state("k");
                long nanos = System.nanoTime();
                long ticks = CoarseClock.nanos();
                gapNanos = Math.max(gapNanos, Math.max(nanos - lastNanos, ticks - lastTicks));
                lastNanos = nanos;
                lastTicks = ticks;
                if (gapNanos >= TimeUnit.MILLISECONDS.toNanos(80) && attempt < 10) {
                    break;
                }
                assertSame(first, state);
                Thread.sleep(1);
            }
            if (gapNanos >= TimeUnit.MILLISECONDS.toNanos(80) && attempt < 10) {
                continue;
            }
            assertEquals(1, created.get());
            store.size(); // runs the store's maintenance
            assertTrue(removed.isEmpty(), "a key in use was removed");
            return;
        }
    }

    @Test
    void anIdleKeyExpiresAfterItsRetention() throws Exception {
        List<Object[]> removed = new CopyOnWriteArrayList<>();
        KeyStore store = KeyStore.local(1000, 20, exhausted -> new Object[] {new Object()}, removed::add, state -> false);
        Object[] first = store.state("k");
        assertSame(first, store.state("k"));
        // 120 ms on the clock the store reads (the agent's, which a busy machine may keep behind)
        long touched = CoarseClock.nanos();
        Thread.sleep(120);
        ClockWait.until(() -> CoarseClock.nanos() - touched >= TimeUnit.MILLISECONDS.toNanos(120), "120 ms after the touch");
        assertEquals(0, store.size(), "expired and removed");
        assertEquals(1, removed.size(), "the removal is reported");
        assertSame(first, removed.get(0));
        assertNotSame(first, store.state("k"));
    }

    @Test
    void everyStateThatLeavesTheStoreIsReportedOnce() throws Exception {
        Set<Object[]> created = ConcurrentHashMap.newKeySet();
        List<Object[]> removed = new CopyOnWriteArrayList<>();
        KeyStore store = KeyStore.local(10, 60_000, exhausted -> {
            Object[] state = {new Object()};
            created.add(state);
            return state;
        }, removed::add, state -> false);
        // more keys than the store keeps of its latest evictions: some states are dropped
        for (int i = 0; i < 10_000; i++) {
            store.state("k" + (i % 2_500));
        }
        long present = store.size();
        assertTrue(present <= 10, "bounded: " + present);
        long kept = store.keptSize();
        assertTrue(kept <= 1024, "the latest evictions kept: " + kept);
        assertTrue(removed.size() > 0, "none dropped");
        assertEquals(created.size(), present + kept + removed.size(), "each state is present, kept or reported");
        assertEquals(removed.size(), Set.copyOf(removed).size(), "no state reported twice");
        assertTrue(created.containsAll(removed));
    }

    /**
     * A key evicted at or over its limit gets its own state back, not a new one: its counts, its
     * windows, its bucket, as they were. Its state was replaced by a fresh one (or one used up
     * until its window's end, had it been refused), so a key at its limit but not yet refused,
     * or one whose sliding window still carried its count, was handed a budget by the flood.
     */
    @Test
    void aStateEvictedAtItsLimitIsGivenBackWhenItsKeyReturns() throws Exception {
        for (boolean keptWhenSpent : new boolean[] {false, true}) {
            List<Object[]> removed = new CopyOnWriteArrayList<>();
            Object[][] victim = new Object[1][];
            KeyStore store = KeyStore.local(10, 60_000, exhausted -> new Object[] {new Object()}, removed::add,
                    state -> keptWhenSpent && state == victim[0]);
            victim[0] = store.state("victim");
            // more keys than the store keeps of its latest evictions under their limits
            for (int pass = 0; pass < 5; pass++) {
                for (int i = 0; i < 3000; i++) {
                    store.state("flood-" + i);
                }
            }
            store.size(); // runs the store's maintenance
            Object[] back = store.state("victim");
            if (keptWhenSpent) {
                assertSame(victim[0], back, "the spent state was not given back");
                assertTrue(removed.stream().noneMatch(state -> state == victim[0]), "a kept state was reported removed");
            } else {
                // the flood does evict the victim, and turns the latest evictions over: this is
                // what the kept state is tested against
                assertNotSame(victim[0], back);
                assertTrue(removed.stream().anyMatch(state -> state == victim[0]), "the evicted state was not reported");
            }
        }
    }

    /**
     * A key evicted under its limits gets its own state back too, as long as fewer keys were
     * evicted after it than the store keeps of its latest evictions (1,024 here): a key in use can
     * be evicted (its use is recorded at most once a second), and calls that found its state
     * before still count there. With a state made afresh beside it, a burst on a fresh key under a
     * flood let 6 to 14 calls through a limit of 5 (LimiterRaceGapsTest).
     */
    @Test
    void aStateEvictedUnderItsLimitsIsGivenBackUntilLaterEvictionsTurnItOver() throws Exception {
        List<Object[]> removed = new CopyOnWriteArrayList<>();
        KeyStore store = KeyStore.local(10, 60_000, exhausted -> new Object[] {new Object()}, removed::add,
                state -> false);
        Object[] victim = store.state("victim");
        // 1,000 keys, each used more often than the victim: it is evicted, and so are they, again and again
        for (int pass = 0; pass < 5; pass++) {
            for (int i = 0; i < 1000; i++) {
                store.state("flood-" + i);
            }
        }
        assertTrue(removed.isEmpty(), "a state was dropped: " + removed.size());
        assertTrue(store.keptSize() >= 990, "kept " + store.keptSize());
        assertSame(victim, store.state("victim"), "the state evicted under its limits was not given back");
        // given back, it is the store's again: evicted again, it is kept again
        for (int pass = 0; pass < 5; pass++) {
            for (int i = 0; i < 1000; i++) {
                store.state("flood-" + i);
            }
        }
        assertSame(victim, store.state("victim"));
    }

    /**
     * A state kept among the latest evictions under their limits is dropped (and reported, so an
     * AllowedTally retires its counter) once the retention has passed since its eviction, as a
     * state kept at its limit is: without it the latest evictions stayed however long ago they were.
     */
    @Test
    void aStateEvictedUnderItsLimitsIsDroppedOnceItsRetentionIsOver() throws Exception {
        List<Object[]> removed = new CopyOnWriteArrayList<>();
        KeyStore store = KeyStore.local(10, 1_000, exhausted -> new Object[] {new Object()}, removed::add,
                state -> false);
        Object[] victim = store.state("victim");
        for (int pass = 0; pass < 5; pass++) {
            for (int i = 0; i < 1000; i++) {
                store.state("flood-" + i);
            }
        }
        assertTrue(store.keptSize() >= 990, "kept " + store.keptSize());
        Thread.sleep(1_500);
        assertEquals(0, store.keptSize(), "states evicted over a retention ago are still kept");
        assertTrue(removed.stream().anyMatch(state -> state == victim), "the victim's state was not reported");
        assertNotSame(victim, store.state("victim"));
    }

    /**
     * A state kept among the latest evictions under their limits is dropped once the retention
     * has passed even when no eviction comes after: a flood ends, its keys expire from the store,
     * and the store, no longer full, evicts nothing more. Only a put dropped them (one at a time),
     * so they stayed, open in the AllowedTally, and a key returning long after got its old state.
     */
    @Test
    void aStateEvictedUnderItsLimitsIsDroppedOnceItsRetentionIsOverWithoutLaterEvictions() throws Exception {
        Set<Object[]> removed = ConcurrentHashMap.newKeySet();
        KeyStore store = KeyStore.local(10, 500, exhausted -> new Object[] {new Object()}, removed::add,
                state -> false);
        Object[] victim = store.state("victim");
        for (int pass = 0; pass < 5; pass++) {
            for (int i = 0; i < 1000; i++) {
                store.state("flood-" + i);
            }
        }
        Thread.sleep(1_000);
        // fewer new keys than the store holds: after the flood's keys expired, nothing is evicted
        for (int i = 0; i < 5; i++) {
            store.state("after-" + i);
        }
        assertTrue(removed.contains(victim), "a state evicted a retention ago is still kept (not reported)");
        assertNotSame(victim, store.state("victim"), "a state evicted a retention ago was given back");
    }
}
