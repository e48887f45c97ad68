package dev.ratelimit.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/** Releases many calls at once behind a latch, the way a burst of traffic arrives. */
public final class Race {
    private Race() {
    }

    /** The call every thread of one round makes (fresh per round: its own key, or its own limiter). */
    @FunctionalInterface
    public interface Round {
        Callable<Boolean> call(int round) throws Exception;
    }

    /**
     * Runs {@code rounds} races of {@code threads} calls and returns how many passed in each round
     * where that was not {@code expected}: an empty list means every round was exact.
     */
    public static List<Integer> wrongRounds(ExecutorService pool, int threads, int rounds, int expected, Round round)
            throws Exception {
        List<Integer> wrong = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
            int passed = passed(pool, threads, round.call(i));
            if (passed != expected) {
                wrong.add(passed);
            }
        }
        return wrong;
    }

    /**
     * Starts {@code threads} calls on {@code pool} (which needs that many threads), lets them all go
     * at the same instant, and returns how many answered {@code true}.
     */
    public static int passed(ExecutorService pool, int threads, Callable<Boolean> call) throws Exception {
        return sum(pool, threads, thread -> call.call() ? 1 : 0);
    }

    /** What one thread of a race does, given its index; it answers a count. */
    @FunctionalInterface
    public interface Runner {
        int run(int thread) throws Exception;
    }

    /**
     * Starts {@code threads} runners on {@code pool} (which needs that many threads), lets them all
     * go at the same instant, and returns the sum of their counts.
     */
    public static int sum(ExecutorService pool, int threads, Runner runner) throws Exception {
        int sum = 0;
        for (int count : each(pool, threads, runner)) {
            sum += count;
        }
        return sum;
    }

    /**
     * Starts {@code threads} runners on {@code pool} (which needs that many threads), lets them all
     * go at the same instant, and returns each one's count, by thread index.
     */
    public static int[] each(ExecutorService pool, int threads, Runner runner) throws Exception {
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Integer>> futures = new ArrayList<>(threads);
        for (int t = 0; t < threads; t++) {
            int thread = t;
            futures.add(pool.submit(() -> {
                ready.countDown();
                go.await();
                return runner.run(thread);
            }));
        }
        ready.await();
        go.countDown();
        int[] counts = new int[threads];
        for (int t = 0; t < threads; t++) {
            counts[t] = futures.get(t).get();
        }
        return counts;
    }
}
