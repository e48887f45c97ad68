package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleConfig;
import dev.ratelimit.testing.WindowGuard;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Review stress of KeyStore.Local's Recent: each state made once, handed out once, closed once. */
class RecentStressTest {
    static final int THREADS = 4;

    /** Identity keyed (arrays do not override equals). */
    static void storeRound(long retentionMillis, int poolKeys, int itersPerThread, String label) throws Exception {
        Set<Object[]> created = ConcurrentHashMap.newKeySet();
        Set<Object[]> removed = ConcurrentHashMap.newKeySet();
        AtomicLong removedCalls = new AtomicLong();
        AtomicLong removedTwice = new AtomicLong();
        Map<Object[], String> owner = new ConcurrentHashMap<>();
        AtomicLong twoKeys = new AtomicLong();
        AtomicLong handedAfterClose = new AtomicLong();
        KeyStore store = KeyStore.local(4, retentionMillis, exhausted -> {
            Object[] state = {new Object()};
            created.add(state);
            return state;
        }, state -> {
            removedCalls.incrementAndGet();
            if (!removed.add(state)) {
                removedTwice.incrementAndGet();
            }
        }, state -> false);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    go.await();
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    for (int i = 0; i < itersPerThread; i++) {
                        String key = random.nextInt(4) == 0 ? "n-" + thread + "-" + i : "p-" + random.nextInt(poolKeys);
                        Object[] state = store.state(key);
                        String had = owner.putIfAbsent(state, key);
                        if (had != null && !had.equals(key)) {
                            twoKeys.incrementAndGet();
                        }
                        if (removed.contains(state)) {
                            // may be a legitimate race (evicted and dropped since): counted, not failed
                            handedAfterClose.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        long present = store.size();
        long kept = store.keptSize();
        System.out.printf("%s: created=%d present=%d kept=%d removed=%d (calls %d) twice=%d twoKeys=%d handedAfterClose=%d%n",
                label, created.size(), present, kept, removed.size(), removedCalls.get(), removedTwice.get(),
                twoKeys.get(), handedAfterClose.get());
        assertEquals(0, removedTwice.get(), "closed twice");
        assertEquals(0, twoKeys.get(), "one state given to two keys");
        assertTrue(kept <= 1024, "bound: " + kept);
        assertEquals(created.size(), present + kept + removed.size(), "created = present + kept + removed");
    }

    @Test
    void storeLongRetention() throws Exception {
        for (int round = 0; round < 2; round++) {
            storeRound(60_000, 2_000, 100_000, "long#" + round);
        }
    }

    @Test
    void storeShortRetention() throws Exception {
        // retention 2 ms: drops by age race takes all the time
        for (int round = 0; round < 2; round++) {
            storeRound(2, 1_500, 100_000, "short#" + round);
        }
    }

    @Test
    void storeSmallPoolUnderBound() throws Exception {
        // pool of 800 + new keys: drops by size (new keys), takes of pool keys find them
        for (int round = 0; round < 2; round++) {
            storeRound(60_000, 800, 100_000, "pool800#" + round);
        }
    }

    /** Limiter: keys under 1,024 in all, so Recent never turns over; each key gets exactly its limit. */
    @Test
    void limiterExact() throws Exception {
        for (int round = 0; round < 2; round++) {
            WindowGuard.awayFromBoundary(3_600_000, 60_000); // exact counts within one hour
            RuleConfig config = ConfigLoader.parse("version: 1\nrules:\n  - name: r\n    key: arg0\n    limit: 20\n    window: 1h\n",
                    "t.yaml", Path.of("."), name -> null).rules().get(0);
            LocalLimiter limiter = LocalLimiter.create(config, 4);
            int keys = 900;
            Map<String, AtomicLong> allowedByKey = new ConcurrentHashMap<>();
            Map<String, AtomicLong> callsByKey = new ConcurrentHashMap<>();
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            AtomicLong allowedAll = new AtomicLong();
            try {
                CountDownLatch go = new CountDownLatch(1);
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    futures.add(pool.submit(() -> {
                        go.await();
                        ThreadLocalRandom random = ThreadLocalRandom.current();
                        for (int i = 0; i < 40_000; i++) {
                            String key = "k" + random.nextInt(keys);
                            callsByKey.computeIfAbsent(key, k -> new AtomicLong()).incrementAndGet();
                            if (Outcome.isAllowed(limiter.acquire(key))) {
                                allowedByKey.computeIfAbsent(key, k -> new AtomicLong()).incrementAndGet();
                                allowedAll.incrementAndGet();
                            }
                        }
                        return null;
                    }));
                }
                go.countDown();
                for (Future<?> f : futures) {
                    f.get();
                }
            } finally {
                pool.shutdownNow();
            }
            long over = 0;
            long under = 0;
            for (Map.Entry<String, AtomicLong> calls : callsByKey.entrySet()) {
                long allowed = allowedByKey.getOrDefault(calls.getKey(), new AtomicLong()).get();
                long expected = Math.min(20, calls.getValue().get());
                if (allowed > expected) {
                    over++;
                } else if (allowed < expected) {
                    under++;
                }
            }
            System.out.printf("limiter#%d: keys=%d allowed=%d metric=%d over=%d under=%d%n", round, callsByKey.size(),
                    allowedAll.get(), limiter.allowed(), over, under);
            assertEquals(0, over, "keys let through over their limit");
            assertEquals(0, under, "keys refused under their limit");
            assertEquals(allowedAll.get(), limiter.allowed(), "Allowed metric");
        }
    }
}
