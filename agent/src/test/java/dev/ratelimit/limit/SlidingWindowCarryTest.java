package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ratelimit.testing.Race;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/**
 * A sliding window carries its final count into the next window. Threads calling across the
 * boundary at once: every call is in exactly one of the two counts, none lost between them. The
 * count carried was read before the next window's counter was installed, and a thread that had
 * read the old counter and incremented it after that read was in neither.
 */
class SlidingWindowCarryTest {
    private static final long WINDOW = 1_000;
    private static final long FIRST = 1_700_000_000_000L;

    @Test
    void everyCallAcrossTheBoundaryIsCountedInOneWindow() throws Exception {
        int threads = 4;
        int callsEach = 300;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < 2000; round++) {
                SlidingWindowLimit limit = new SlidingWindowLimit(1_000_000_000L, WINDOW);
                Object state = limit.newState(false);
                limit.acquireAt(state, FIRST + 10);
                Race.sum(pool, threads, thread -> {
                    for (int i = 0; i < callsEach; i++) {
                        // half the threads cross into the next window a third of the way in,
                        // the others keep reading a clock still in the first window
                        boolean next = thread % 2 == 0 ? i >= callsEach / 3 : i >= callsEach - 1;
                        limit.acquireAt(state, next ? FIRST + WINDOW + 10 : FIRST + 900);
                    }
                    return 0;
                });
                WindowCounter current = ((EpochWindowLimit.WindowState) state).get();
                assertEquals(FIRST / WINDOW + 1, current.id, "round " + round);
                assertEquals(1 + threads * callsEach, current.previous + current.count(), "round " + round);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
