package dev.ratelimit.benchmarks;

import com.google.common.util.concurrent.RateLimiter;
import dev.ratelimit.config.ConfigException;
import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.limit.ActiveRule;
import dev.ratelimit.limit.Outcome;
import dev.ratelimit.limit.RequestKeys;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.local.SynchronizationStrategy;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The limiter core, ours beside Bucket4j, Resilience4j and Guava, each configured to allow.
 *
 * <p>Threads: the class runs with {@code @Threads(1)}; the 2-thread figures come from a second,
 * separate run of the same class with {@code -t 2} (see README.md). With 2 threads, every
 * {@link Scope#Benchmark} object (each rule, bucket, limiter) is shared by both threads, so
 * "hot key" is one key hammered by both cores; the spread benchmark keeps a cursor per thread
 * over the same 1024 keys.
 *
 * <p>Every benchmark hands its result to the {@link Blackhole}; the setup checks that each
 * limiter allows (and that the rejected rule rejects), and the tear-down checks it again after
 * the run, so a limiter that started refusing part-way would fail the run rather than report a
 * cheap refusal as an allowed call.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@Threads(1)
@State(Scope.Benchmark)
public class LimiterBenchmark {
    /** Far more than any run can use: every call is allowed. */
    static final long HUGE = 1_000_000_000_000_000_000L;
    static final int KEYS = 1024;
    /** Bucket4j refills at most one token a nanosecond; a trillion tokens outlast any run. */
    static final long BUCKET_CAPACITY = 1_000_000_000_000L;
    static final long BUCKET_REFILL = 1_000_000_000L;

    ActiveRule global;
    ActiveRule hotKey;
    ActiveRule spread;
    ActiveRule rejected;
    ActiveRule exemptRule;

    Object[] hotArguments;
    Object[][] spreadArguments;
    RequestKeys exemptRequest;

    Bucket bucket4jLockFree;
    Bucket bucket4jSynchronized;
    AtomicRateLimiter resilience4j;
    RateLimiter guava;

    /** A cursor over the spread keys, one per thread. */
    @State(Scope.Thread)
    public static class Cursor {
        int next;

        @Setup(Level.Trial)
        public void start() {
            // threads start apart so that they do not walk the keys in lock step
            next = (int) (Thread.currentThread().getId() * 397) & (KEYS - 1);
        }
    }

    @Setup(Level.Trial)
    public void setUp() throws ConfigException {
        RuleSet rules = ConfigLoader.parse(
                "version: 1\n"
                        + "store:\n"
                        + "  type: local\n"
                        + "  max-keys: 100000\n"
                        + "rules:\n"
                        + "  - name: global\n"
                        + "    key: global\n"
                        + "    limit: " + HUGE + "\n"
                        + "    window: 1h\n"
                        + "  - name: hot-key\n"
                        + "    key: arg0\n"
                        + "    limit: " + HUGE + "\n"
                        + "    window: 1h\n"
                        + "  - name: spread\n"
                        + "    key: arg0\n"
                        + "    limit: " + HUGE + "\n"
                        + "    window: 1h\n"
                        + "  - name: rejected\n"
                        + "    key: arg0\n"
                        + "    limit: 1\n"
                        + "    window: 1d\n"
                        + "  - name: exempt\n"
                        + "    key: arg0\n"
                        + "    limit: " + HUGE + "\n"
                        + "    window: 1h\n",
                "bench.yaml", Path.of("."), name -> null);
        long maxKeys = rules.store().maxKeys();
        global = new ActiveRule(rules.rule("global").orElseThrow(), maxKeys);
        hotKey = new ActiveRule(rules.rule("hot-key").orElseThrow(), maxKeys);
        spread = new ActiveRule(rules.rule("spread").orElseThrow(), maxKeys);
        rejected = new ActiveRule(rules.rule("rejected").orElseThrow(), maxKeys);
        exemptRule = new ActiveRule(rules.rule("exempt").orElseThrow(), maxKeys);

        hotArguments = new Object[] {"user-hot"};
        spreadArguments = new Object[KEYS][];
        for (int i = 0; i < KEYS; i++) {
            spreadArguments[i] = new Object[] {"user-" + i};
        }
        exemptRequest = new ExemptRequest();
        floorMap.put((String) hotArguments[0], new AtomicLongArray(2 * PADDED_SLOT));

        // every key present before the first measured call; the rejected rule's one call used
        requireAllowed("global", global.decide(null, null));
        requireAllowed("hot key", hotKey.decide(hotArguments, null));
        for (Object[] arguments : spreadArguments) {
            requireAllowed("spread", spread.decide(arguments, null));
        }
        requireAllowed("rejected (first call)", rejected.decide(hotArguments, null));
        requireAllowed("exempt", exemptRule.decide(hotArguments, exemptRequest));

        bucket4jLockFree = Bucket.builder()
                .addLimit(limit -> limit.capacity(BUCKET_CAPACITY).refillGreedy(BUCKET_REFILL, Duration.ofSeconds(1)))
                .withSynchronizationStrategy(SynchronizationStrategy.LOCK_FREE)
                .build();
        bucket4jSynchronized = Bucket.builder()
                .addLimit(limit -> limit.capacity(BUCKET_CAPACITY).refillGreedy(BUCKET_REFILL, Duration.ofSeconds(1)))
                .withSynchronizationStrategy(SynchronizationStrategy.SYNCHRONIZED)
                .build();
        resilience4j = new AtomicRateLimiter("bench", RateLimiterConfig.custom()
                .limitForPeriod(Integer.MAX_VALUE)
                .limitRefreshPeriod(Duration.ofSeconds(1))
                .timeoutDuration(Duration.ZERO)
                .build());
        guava = RateLimiter.create(1e12);
        check();
    }

    @TearDown(Level.Trial)
    public void check() {
        requireAllowed("global", global.decide(null, null));
        requireAllowed("hot key", hotKey.decide(hotArguments, null));
        requireAllowed("spread", spread.decide(spreadArguments[7], null));
        if (Outcome.isAllowed(rejected.decide(hotArguments, null))) {
            throw new IllegalStateException("the rejected rule allowed a call");
        }
        requireAllowed("exempt", exemptRule.decide(hotArguments, exemptRequest));
        if (exemptRule.metrics().allowed() != 0 || exemptRule.metrics().exempted() == 0) {
            throw new IllegalStateException("the exempt path counted calls: " + exemptRule.metrics().allowed());
        }
        require("bucket4j lock-free", bucket4jLockFree.tryConsume(1));
        require("bucket4j synchronized", bucket4jSynchronized.tryConsume(1));
        require("resilience4j", resilience4j.acquirePermission());
        require("guava", guava.tryAcquire());
    }

    private static void requireAllowed(String what, long outcome) {
        require(what, Outcome.isAllowed(outcome));
    }

    private static void require(String what, boolean allowed) {
        if (!allowed) {
            throw new IllegalStateException(what + ": expected an allowed call");
        }
    }

    // ---- ours -------------------------------------------------------------------------------

    /** A rule keyed {@code global}: no key lookup at all. */
    @Benchmark
    public void ours_allowed_global(Blackhole bh) {
        bh.consume(global.decide(null, null));
    }

    /** A rule keyed {@code arg0}, one key, present in the store. */
    @Benchmark
    public void ours_allowed_hotKey(Blackhole bh) {
        bh.consume(hotKey.decide(hotArguments, null));
    }

    /** A rule keyed {@code arg0}, 1024 keys, all present, taken in turn. */
    @Benchmark
    public void ours_allowed_spread1024(Cursor cursor, Blackhole bh) {
        int i = cursor.next;
        cursor.next = (i + 1) & (KEYS - 1);
        bh.consume(spread.decide(spreadArguments[i], null));
    }

    /** Limit 1, already used: every call here is rejected (and counted). */
    @Benchmark
    public void ours_rejected(Blackhole bh) {
        bh.consume(rejected.decide(hotArguments, null));
    }

    /** A request carrying a valid token: not counted. */
    @Benchmark
    public void ours_exempt(Blackhole bh) {
        bh.consume(exemptRule.decide(hotArguments, exemptRequest));
    }

    // ---- floors: what the machine charges for the atomic steps a decision is made of -----------

    final AtomicLong floorCounter = new AtomicLong();
    final LongAdder floorAdder = new LongAdder();

    /** One {@code AtomicLong.incrementAndGet}: the one step an increment-first decision must take. */
    @Benchmark
    public void floor_atomicIncrement(Blackhole bh) {
        bh.consume(floorCounter.incrementAndGet());
    }

    /**
     * One {@code LongAdder.increment}, as a rule's metrics count each allowed call when its
     * limiter cannot (sliding windows, token buckets, several limits); a rule with one fixed
     * window counts them from its window counters instead.
     */
    @Benchmark
    public void floor_longAdder() {
        floorAdder.increment();
    }

    /** A counter alone on its cache lines: slot 16 of 32 longs is 128 bytes from either end. */
    static final int PADDED_SLOT = 16;
    final ConcurrentHashMap<String, AtomicLongArray> floorMap = new ConcurrentHashMap<>();

    /**
     * The least a keyed decision can do: find the key's counter in a {@code ConcurrentHashMap}
     * and increment it, the counter on a cache line of its own. No window, no expiry, no bound,
     * no metrics. With 2 threads on one key this is the floor of the hot-key case.
     */
    @Benchmark
    public void floor_mapLookupIncrement(Blackhole bh) {
        bh.consume(floorMap.get((String) hotArguments[0]).incrementAndGet(PADDED_SLOT));
    }

    // ---- the alternatives ---------------------------------------------------------------------

    @Benchmark
    public void bucket4j_lockFree(Blackhole bh) {
        bh.consume(bucket4jLockFree.tryConsume(1));
    }

    @Benchmark
    public void bucket4j_synchronized(Blackhole bh) {
        bh.consume(bucket4jSynchronized.tryConsume(1));
    }

    @Benchmark
    public void resilience4j_atomic(Blackhole bh) {
        bh.consume(resilience4j.acquirePermission());
    }

    @Benchmark
    public void guava_tryAcquire(Blackhole bh) {
        bh.consume(guava.tryAcquire());
    }

    /** An HTTP request that carried a valid internal token. */
    static final class ExemptRequest implements RequestKeys {
        @Override
        public String clientIp() {
            return "203.0.113.7";
        }

        @Override
        public String header(String name) {
            return null;
        }

        @Override
        public String principal() {
            return null;
        }

        @Override
        public boolean exempt() {
            return true;
        }
    }
}
