package dev.ratelimit.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.config.RedisConfig;
import dev.ratelimit.limit.StoreUnavailableException;
import dev.ratelimit.testing.RedisServer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * A call that waits for a change of the pool while an opening is under way: the openings that
 * end without a change the store signals must not make it wait its whole timeout.
 */
class RedisOpeningWakeupTest {

    /**
     * An opening that found the pool at capacity counting the openings under way adds nothing and
     * ends without signalling the waiting calls (it would wake them to ask again, and spin). While
     * one is under way (its thread preempted between its count and its end, on a loaded machine)
     * a call that finds itself at capacity too took it for an opening whose end would wake it, and
     * waited until its deadline, though the pool had room: it followed on-error (1.5 s here) where
     * looking again after a slice opened it a connection. The at-capacity opening is stood for by
     * the count of openings held up a moment.
     */
    @Test
    void anOpeningThatAddsNothingDoesNotMakeACallWaitItsWholeTimeout() throws Exception {
        try (RedisServer server = RedisServer.start();
                RedisStore two = new RedisStore(new RedisConfig(server.uri(), Duration.ofMillis(1500), "rl-wake:"), 2)) {
            settle(two);
            Jedis held = two.borrow(System.nanoTime() + 1_000_000_000L);
            assertEquals(1, two.pool.getNumActive() + two.pool.getNumIdle(), "one connection, in use");
            AtomicInteger opening = openingCount(two);
            opening.incrementAndGet(); // an opening at capacity, under way
            AtomicInteger awaiting = awaitingChange(two);
            CountDownLatch started = new CountDownLatch(1);
            CompletableFuture<Long> waiting = CompletableFuture.supplyAsync(() -> {
                started.countDown();
                long start = System.nanoTime();
                try {
                    two.release(two.borrow(start + 1_500_000_000L));
                    return (System.nanoTime() - start) / 1_000_000;
                } catch (StoreUnavailableException e) {
                    return -1L;
                }
            });
            // the race: the call must find the pool at capacity (the held-up opening counted) and
            // be waiting for a change before the opening ends. The task may start late on a loaded
            // machine (it once could start after the opening had ended, and found room at once:
            // the test passed without the race), so the opening ends only once the call waits.
            assertTrue(started.await(5, TimeUnit.SECONDS), "the call never started");
            long until = System.nanoTime() + 5_000_000_000L;
            while (awaiting.get() == 0 && !waiting.isDone() && System.nanoTime() < until) {
                Thread.sleep(1);
            }
            assertTrue(awaiting.get() > 0, () -> "the call is not waiting for a change of the pool"
                    + (waiting.isDone() ? " (it ended: " + waiting.join() + " ms)" : ""));
            Thread.sleep(50);
            opening.decrementAndGet(); // it ends, adding nothing: no change signalled
            long millis = waiting.get(5, TimeUnit.SECONDS);
            two.release(held);
            assertTrue(millis >= 0 && millis <= 700, "the call got a connection after " + millis + " ms (-1: none)");
        }
    }

    static void settle(RedisStore store) throws InterruptedException {
        long until = System.nanoTime() + 10_000_000_000L;
        while ((store.connector.getActiveCount() > 0 || Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals("rate-limit-agent-redis-warm-up"))) && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        store.pool.clear();
    }

    /** The store's count of calls waiting for a change of the pool. */
    static AtomicInteger awaitingChange(RedisStore store) throws ReflectiveOperationException {
        java.lang.reflect.Field field = RedisStore.class.getDeclaredField("awaitingChange");
        field.setAccessible(true);
        return (AtomicInteger) field.get(store);
    }

    /** The store's count of openings past their capacity check, making a connection. */
    static AtomicInteger signalledOpenings(RedisStore store) throws ReflectiveOperationException {
        java.lang.reflect.Field field = RedisStore.class.getDeclaredField("signalledOpenings");
        field.setAccessible(true);
        return (AtomicInteger) field.get(store);
    }

    static AtomicInteger openingCount(RedisStore store) throws ReflectiveOperationException {
        java.lang.reflect.Field field = RedisStore.class.getDeclaredField("opening");
        field.setAccessible(true);
        return (AtomicInteger) field.get(store);
    }
}
