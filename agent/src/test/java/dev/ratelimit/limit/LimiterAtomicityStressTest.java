package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ratelimit.config.Algorithm;
import dev.ratelimit.testing.WindowGuard;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The latch races of {@link LimiterConcurrencyTest} release 100 threads on 2 cores: at most two
 * run at once, and a race whose window is a few instructions wide is crossed only when a thread
 * is preempted inside it. The concurrency audit made the token bucket's compare-and-set a
 * check-then-set with no pause in between, and every latch race still passed. Here one thread per
 * core is released by a spin barrier, so the two really run side by side, round after round:
 * 20,000 rounds, each a fresh key that both threads call until the limit is gone. Exactly the
 * limit passes in every round.
 */
class LimiterAtomicityStressTest {
    private static final int ROUNDS = 20_000;
    private static final int LIMIT = 5;
    /** Calls each thread makes per round: together, twice the limit. */
    private static final int CALLS = LIMIT;

    @BeforeEach
    void startWellInsideAWindow() {
        WindowGuard.awayFromBoundary(3_600_000, 60_000);
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void twoThreadsSideBySideLetExactlyTheLimitThroughEveryRound(Algorithm algorithm) throws Exception {
        LocalLimiter limiter = LocalLimiter.create(LimiterConcurrencyTest.rule(algorithm, "arg0",
                "    limit: " + LIMIT + "\n    window: 1h"), 100_000);
        int threads = 2;
        int[][] passed = new int[threads][ROUNDS];
        AtomicInteger arrived = new AtomicInteger();
        List<Thread> racers = new ArrayList<>();
        Throwable[] failure = new Throwable[1];
        for (int t = 0; t < threads; t++) {
            int thread = t;
            Thread racer = new Thread(() -> {
                for (int round = 0; round < ROUNDS; round++) {
                    // a spin barrier: no thread parks, so both start each round on their own core
                    arrived.incrementAndGet();
                    while (arrived.get() < threads * (round + 1)) {
                        Thread.onSpinWait();
                    }
                    String key = "round-" + round;
                    int allowed = 0;
                    for (int call = 0; call < CALLS; call++) {
                        allowed += Outcome.isAllowed(limiter.acquire(key)) ? 1 : 0;
                    }
                    passed[thread][round] = allowed;
                }
            }, "racer-" + t);
            racer.setUncaughtExceptionHandler((dead, e) -> failure[0] = e);
            racers.add(racer);
        }
        racers.forEach(Thread::start);
        for (Thread racer : racers) {
            racer.join(120_000);
        }
        assertEquals(null, failure[0]);
        List<String> wrong = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            int sum = passed[0][round] + passed[1][round];
            if (sum != LIMIT && wrong.size() < 20) {
                wrong.add("round " + round + ": " + sum);
            }
        }
        assertEquals(List.of(), wrong, algorithm + ": rounds where a number other than " + LIMIT + " passed");
    }
}
