package dev.ratelimit.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.config.Algorithm;
import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleConfig;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.limit.Outcome;
import dev.ratelimit.testing.Race;
import dev.ratelimit.testing.RedisServer;
import dev.ratelimit.testing.RefusedBursts;
import dev.ratelimit.testing.WindowGuard;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import redis.clients.jedis.Jedis;

/** The Redis store against a real redis-server: exactness under concurrency, expiry, scripts. */
class RedisLimiterTest {
    private static final int THREADS = 100;
    private static RedisServer server;
    private static RedisStore store;
    private static ExecutorService pool;

    @BeforeAll
    static void start() throws Exception {
        server = RedisServer.start();
        pool = Executors.newFixedThreadPool(THREADS);
    }

    @AfterAll
    static void stop() throws Exception {
        if (pool != null) {
            pool.shutdownNow();
        }
        if (store != null) {
            store.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void startWellInsideAWindow() {
        WindowGuard.awayFromBoundary(3_600_000, 30_000);
    }

    /**
     * A rule on this server. Its timeout is long: the tests that use it are about exact counts and
     * scripts, not about a store that does not answer (RedisFaultTest's), and on a loaded 2-core
     * machine (a CI run beside another build) a round of 100 simultaneous calls had calls time out
     * at 500 ms.
     */
    static RuleSet rules(RedisServer server, String algorithm, String limits) throws Exception {
        return ConfigLoader.parse(String.join("\n",
                "version: 1",
                "store:",
                "  type: redis",
                "  redis:",
                "    uri: " + server.uri(),
                "    timeout: 5s",
                "rules:",
                "  - name: r",
                "    key: arg0",
                "    algorithm: " + algorithm,
                limits,
                ""), "rules.yaml", Path.of("."), name -> null);
    }

    private static RedisLimiter limiter(Algorithm algorithm, String limits) throws Exception {
        RuleSet rules = rules(server, algorithm.yamlName(), limits);
        if (store == null) {
            store = new RedisStore(rules.store().redis());
        }
        RuleConfig rule = rules.rules().get(0);
        return new RedisLimiter(store, rule);
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void oneHundredSimultaneousCallsLetExactlyTheLimitThroughEveryRound(Algorithm algorithm) throws Exception {
        RedisLimiter limiter = limiter(algorithm, "    limit: 5\n    window: 1h");
        List<Integer> wrong = Race.wrongRounds(pool, THREADS, 200, 5,
                round -> () -> Outcome.isAllowed(limiter.acquire(algorithm + "-round-" + round)));
        assertEquals(List.of(), wrong, "rounds where a number other than 5 passed");
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void everyLimitOfARuleIsEnforcedInOneScriptCall(Algorithm algorithm) throws Exception {
        RedisLimiter limiter = limiter(algorithm, "    limits:\n      - {limit: 3, window: 1h}\n      - {limit: 50, window: 1d}");
        String key = "multi-" + algorithm;
        int passed = race(() -> Outcome.isAllowed(limiter.acquire(key)));
        assertEquals(3, passed);
        try (Jedis jedis = server.client()) {
            Set<String> keys = jedis.keys("rl:{r|" + key + "}:*");
            assertEquals(Set.of("rl:{r|" + key + "}:" + algorithm.yamlName() + ":1h",
                    "rl:{r|" + key + "}:" + algorithm.yamlName() + ":1d"), keys);
        }
    }

    /** As in the local store (AlgorithmBehaviourTest): a refused call uses up none of the rule's limits. */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aCallOneLimitRefusesUsesUpNoneOfTheOthers(Algorithm algorithm) throws Exception {
        RedisLimiter limiter = limiter(algorithm, RefusedBursts.LIMITS);
        String key = "refused-" + algorithm;
        assertEquals(RefusedBursts.HOURLY_LIMIT, RefusedBursts.allowedInAll(() -> limiter.acquire(key), Outcome::isAllowed));
    }

    @Test
    void theFixedWindowCountAndTimeLeftComeFromTheServer() throws Exception {
        RedisLimiter limiter = limiter(Algorithm.FIXED_WINDOW, "    limit: 2\n    window: 1h");
        assertEquals(1, Outcome.remaining(limiter.acquire("time-left")));
        assertEquals(0, Outcome.remaining(limiter.acquire("time-left")));
        long rejected = limiter.acquire("time-left");
        assertFalse(Outcome.isAllowed(rejected));
        long msLeftInHour = 3_600_000 - System.currentTimeMillis() % 3_600_000;
        assertTrue(Math.abs(Outcome.retryMillis(rejected) - msLeftInHour) < 2000,
                Outcome.retryMillis(rejected) + " vs " + msLeftInHour);
        try (Jedis jedis = server.client()) {
            long ttl = jedis.pttl("rl:{r|time-left}:fixed-window:1h");
            assertTrue(ttl > 0 && ttl <= 3_600_000, "every counter expires with its window: " + ttl);
        }
    }

    /**
     * Rule names may hold ":", so the rule and the key are joined by a character names cannot
     * hold: rule {@code login} with the key {@code admin:*} (a header a client writes) once shared
     * the counter of rule {@code login:admin} keyed {@code global}, and could use it up.
     */
    @Test
    void twoRulesNeverShareACounterWhateverTheirKeys() throws Exception {
        limiter(Algorithm.FIXED_WINDOW, "    limit: 1\n    window: 1h"); // opens the store
        RuleSet rules = ConfigLoader.parse(String.join("\n",
                "version: 1",
                "rules:",
                "  - name: login",
                "    key: header:X-User",
                "    limit: 1",
                "    window: 1h",
                "  - name: login:admin",
                "    limit: 1",
                "    window: 1h",
                ""), "rules.yaml", Path.of("."), name -> null);
        RedisLimiter byHeader = new RedisLimiter(store, rules.rule("login").orElseThrow());
        RedisLimiter global = new RedisLimiter(store, rules.rule("login:admin").orElseThrow());
        assertTrue(Outcome.isAllowed(global.acquire(null)));
        assertTrue(Outcome.isAllowed(byHeader.acquire("admin:*")), "rule login counted on rule login:admin's counter");
        assertFalse(Outcome.isAllowed(global.acquire(null)));
        assertFalse(Outcome.isAllowed(byHeader.acquire("admin:*")));
    }

    /**
     * A reload that changes a rule's limit goes on counting on the server's counters (README, "Hot
     * reload"): they are named by the rule, key, algorithm and window, which it keeps; the other
     * instances, which reload at other moments, count there too. A new window counts afresh.
     */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aRuleReloadedWithAnotherLimitGoesOnCountingWhereTheServersCountsStand(Algorithm algorithm) throws Exception {
        String key = "reloaded-" + algorithm;
        RedisLimiter before = limiter(algorithm, "    limit: 3\n    window: 1h");
        for (int i = 0; i < 3; i++) {
            assertTrue(Outcome.isAllowed(before.acquire(key)));
        }
        RedisLimiter raised = limiter(algorithm, "    limit: 5\n    window: 1h");
        int allowed = 0;
        for (int i = 0; i < 5; i++) {
            allowed += Outcome.isAllowed(raised.acquire(key)) ? 1 : 0;
        }
        // a token bucket the old limit emptied is as empty: it fills at the new rate, a token in 12 minutes
        assertEquals(algorithm == Algorithm.TOKEN_BUCKET ? 0 : 2, allowed, "the raised limit's calls after 3 of the old one's");
        RedisLimiter otherWindow = limiter(algorithm, "    limit: 5\n    window: 2h");
        allowed = 0;
        for (int i = 0; i < 6; i++) {
            allowed += Outcome.isAllowed(otherWindow.acquire(key)) ? 1 : 0;
        }
        assertEquals(5, allowed, "a new window counts afresh");
    }

    /**
     * A call in the first millisecond of a fixed window counts in that window. Redis deletes a key
     * only once the clock has passed its expiry time, so a counter that expired "at" the window's
     * end was still there in that millisecond, and the call was counted in the old window: in a
     * test of 5 ms windows, nearly every call made in a window's first millisecond.
     */
    @Test
    void aFixedWindowStartsAfreshInItsFirstMillisecond() throws Exception {
        limiter(Algorithm.FIXED_WINDOW, "    limit: 1\n    window: 1h"); // opens the store
        List<String> key = List.of("rl:{r|first-ms}:fixed-window:5ms");
        // the window, and a limit out of reach (the script takes a call a limit rejects back out)
        List<String> window = List.of("5", "1000000");
        long previousLeft = -1;
        long previousCount = 0;
        long previousStart = 0;
        int firstMillisecondCalls = 0;
        int checked = 0;
        List<String> wrong = new ArrayList<>();
        for (int i = 0; i < 4000; i++) {
            long start = System.nanoTime();
            List<Long> reply = store.eval(store.fixedWindow, key, window);
            long end = System.nanoTime();
            long count = reply.get(0);
            long left = reply.get(1);
            if (left == 5) {
                firstMillisecondCalls++;
            }
            // One thread. The server ran this call less than 4 ms after the call before if the
            // whole span from that call's start to this one's end is under 4 ms; then the time left
            // has fallen if this call is in the same window, and risen if it is in the next. After
            // a longer pause (a GC, say) a window may have been skipped: that call is not judged.
            if (previousLeft >= 0 && end - previousStart < 4_000_000) {
                long expected = left > previousLeft ? 1 : previousCount + 1;
                checked++;
                if (count != expected && wrong.size() < 10) {
                    wrong.add("call " + i + ": count " + count + ", expected " + expected + " (" + left + " ms left)");
                }
            }
            previousLeft = left;
            previousCount = count;
            previousStart = start;
        }
        assertTrue(checked > 3000, "calls judged: " + checked);
        assertTrue(firstMillisecondCalls > 20, "calls in a window's first millisecond: " + firstMillisecondCalls);
        assertEquals(List.of(), wrong);
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void countersAreGoneFromRedisOnceTheirWindowIsOver(Algorithm algorithm) throws Exception {
        RedisLimiter limiter = limiter(algorithm, "    limit: 3\n    window: 500ms");
        // a fixed window's counter expires when its window ends: the ten must be counted, and
        // looked for, inside one window. Should the window turn between the first call and KEYS
        // all the same (a stalled machine), the counters may be gone for the right reason: seen
        // from the clock before the first call and after KEYS, the ten are counted again under new
        // names, a few times at most, and the last try is judged
        try (Jedis jedis = server.client()) {
            String pattern = null;
            int found = -1;
            for (int attempt = 1; attempt <= 3; attempt++) {
                WindowGuard.awayFromBoundary(500, 250);
                String prefix = "expiring-" + algorithm + "-" + attempt + "-";
                long first = System.currentTimeMillis();
                for (int i = 0; i < 10; i++) {
                    limiter.acquire(prefix + i);
                }
                pattern = "rl:{r|" + prefix + "*";
                found = jedis.keys(pattern).size();
                if (first / 500 == System.currentTimeMillis() / 500) {
                    break;
                }
            }
            assertEquals(10, found);
            Thread.sleep(1_200);
            // every try's counters, not the last one's alone
            assertEquals(Set.of(), jedis.keys("rl:{r|expiring-" + algorithm + "-*"));
        }
    }

    /**
     * The server's clock stepped back an hour: a token bucket's stored arrival time then lies an
     * hour ahead of the server's now, which no allowed call can leave. It once rejected the key
     * for the hour; the bucket now starts full again.
     */
    @Test
    void aTokenBucketLeftFarAheadByAClockSteppedBackStartsFull() throws Exception {
        RedisLimiter limiter = limiter(Algorithm.TOKEN_BUCKET, "    limit: 2\n    window: 1m");
        String key = "rl:{r|stepped}:token-bucket:1m";
        try (Jedis jedis = server.client()) {
            List<String> time = jedis.time();
            long nowMicros = Long.parseLong(time.get(0)) * 1_000_000L + Long.parseLong(time.get(1));
            jedis.set(key, Long.toString(nowMicros + 3_600_000_000L));
        }
        assertEquals(1, Outcome.remaining(limiter.acquire("stepped")));
        assertEquals(0, Outcome.remaining(limiter.acquire("stepped")));
        long rejected = limiter.acquire("stepped");
        assertFalse(Outcome.isAllowed(rejected));
        // 2 a minute: the next token comes one interval (30 s) after the bucket was full, less the
        // time the three calls took; a retry told shorter sends the client back too early
        assertTrue(Outcome.retryMillis(rejected) > 29_000 && Outcome.retryMillis(rejected) <= 30_000,
                "retry " + Outcome.retryMillis(rejected));
    }

    /**
     * A counter of the window after the server's clock (the clock stepped back by less than a
     * window, or a failover to a replica whose clock is a little behind) keeps its count: it was
     * overwritten with a count of 1, a fresh budget in the middle of a window.
     */
    @Test
    void aFixedWindowCounterOneWindowAheadOfTheClockKeepsItsCount() throws Exception {
        RedisLimiter limiter = limiter(Algorithm.FIXED_WINDOW, "    limit: 2\n    window: 1m");
        try (Jedis jedis = server.client()) {
            jedis.hset("rl:{r|ahead}:fixed-window:1m", Map.of("w", Long.toString(minuteId(jedis) + 1), "c", "2"));
        }
        long rejected = limiter.acquire("ahead");
        assertFalse(Outcome.isAllowed(rejected), "the newer window's count stands");
        // the count is the next minute's: no call passes before that minute ends, more than a
        // minute from now and at most two
        assertTrue(Outcome.retryMillis(rejected) > 60_000 && Outcome.retryMillis(rejected) <= 120_000,
                "retry " + Outcome.retryMillis(rejected));
    }

    /** The same for a sliding window: the newer window's count stands, and a call over the limit is refused. */
    @Test
    void aSlidingWindowStateOneWindowAheadOfTheClockKeepsItsCount() throws Exception {
        RedisLimiter limiter = limiter(Algorithm.SLIDING_WINDOW, "    limit: 2\n    window: 1m");
        try (Jedis jedis = server.client()) {
            jedis.hset("rl:{r|ahead}:sliding-window:1m",
                    Map.of("w", Long.toString(minuteId(jedis) + 1), "c", "2", "p", "0"));
        }
        assertFalse(Outcome.isAllowed(limiter.acquire("ahead")), "the newer window's count stands");
        try (Jedis jedis = server.client()) {
            assertEquals("2", jedis.hget("rl:{r|ahead}:sliding-window:1m", "c"), "the refused call is taken back out");
        }
    }

    /**
     * A sliding window's retry time, decided on the server's counts and clock, is the first moment
     * a retry passes: for a call refused by the window's own count, a millisecond past the window's
     * end (the carried share, rounded down, then leaves room), not half a window later, where the
     * share taken exactly leaves room.
     */
    @Test
    void aSlidingWindowsRetryFromTheServerIsTheFirstMomentARetryPasses() throws Exception {
        RedisLimiter limiter = limiter(Algorithm.SLIDING_WINDOW, "    limit: 2\n    window: 1m");
        try (Jedis jedis = server.client()) {
            if (msLeftInMinute(jedis) < 3_000) {
                Thread.sleep(msLeftInMinute(jedis) + 50);
            }
            jedis.hset("rl:{r|own-count}:sliding-window:1m", Map.of("w", Long.toString(minuteId(jedis)), "c", "2", "p", "0"));
            long rejected = limiter.acquire("own-count");
            long msLeft = msLeftInMinute(jedis);
            assertFalse(Outcome.isAllowed(rejected));
            assertTrue(Math.abs(Outcome.retryMillis(rejected) - msLeft) < 1_000,
                    Outcome.retryMillis(rejected) + " ms, the window ends in " + msLeft);
        }
    }

    private static long msLeftInMinute(Jedis jedis) {
        List<String> time = jedis.time();
        long nowMillis = Long.parseLong(time.get(0)) * 1000L + Long.parseLong(time.get(1)) / 1000L;
        return 60_000L - nowMillis % 60_000L;
    }

    /** The id of the server's current one-minute window. */
    private static long minuteId(Jedis jedis) {
        List<String> time = jedis.time();
        long nowMillis = Long.parseLong(time.get(0)) * 1000L + Long.parseLong(time.get(1)) / 1000L;
        return nowMillis / 60_000L;
    }

    @Test
    void aFlushedScriptIsLoadedAgain() throws Exception {
        RedisLimiter limiter = limiter(Algorithm.FIXED_WINDOW, "    limit: 5\n    window: 1h");
        assertTrue(Outcome.isAllowed(limiter.acquire("flushed")));
        try (Jedis jedis = server.client()) {
            jedis.scriptFlush();
        }
        assertEquals(3, Outcome.remaining(limiter.acquire("flushed")));
    }

    /**
     * A proxy that routes by key refuses {@code SCRIPT LOAD}, which names none (Envoy's Redis
     * proxy does not support it): here a server with the command renamed away. The warm-up's
     * load fails, and each call's {@code NOSCRIPT} is answered with {@code EVAL}, which names the
     * key, instead of a load that failed and failed the call, every call (the Redis review of the
     * thirty-fourth round, from reading the code).
     */
    @Test
    void withoutScriptLoadTheScriptIsSentWithItsKey() throws Exception {
        try (dev.ratelimit.testing.RedisServer noScriptCommand = dev.ratelimit.testing.RedisServer.start(
                List.of("--rename-command", "SCRIPT", "\"\""));
                RedisStore proxied = new RedisStore(new dev.ratelimit.config.RedisConfig(noScriptCommand.uri(),
                        java.time.Duration.ofSeconds(1), "rl:"))) {
            for (Algorithm algorithm : Algorithm.values()) {
                RedisLimiter limiter = new RedisLimiter(proxied,
                        rules(noScriptCommand, algorithm.yamlName(), "    limit: 3\n    window: 1h").rules().get(0));
                for (int i = 0; i < 3; i++) {
                    assertTrue(Outcome.isAllowed(limiter.acquire("proxied")), algorithm + ": call " + i);
                }
                assertFalse(Outcome.isAllowed(limiter.acquire("proxied")), algorithm.toString());
            }
        }
    }

    /**
     * The script takes a sliding window's rejected call back out of the count, as the local
     * store does: counted, a client's rejected attempts were carried into the next window.
     */
    @Test
    void aSlidingWindowsRejectedCallsAreNotKeptInItsCount() throws Exception {
        RedisLimiter limiter = limiter(Algorithm.SLIDING_WINDOW, "    limit: 2\n    window: 1h");
        int allowed = 0;
        for (int i = 0; i < 5; i++) {
            allowed += Outcome.isAllowed(limiter.acquire("taken-back")) ? 1 : 0;
        }
        assertEquals(2, allowed);
        try (Jedis jedis = server.client()) {
            Set<String> keys = jedis.keys("rl:{r|taken-back}:sliding-window:*");
            assertEquals(1, keys.size(), keys.toString());
            assertEquals("2", jedis.hget(keys.iterator().next(), "c"));
        }
    }

    @Test
    void theSlidingWindowAllowsNoDoubleBurstAcrossTheBoundary() throws Exception {
        RedisLimiter limiter = limiter(Algorithm.SLIDING_WINDOW, "    limit: 10\n    window: 1s");
        // the late burst (20 round trips in the last 150 ms of a second) must fit in that second,
        // and the early one must come in the next: a stalled machine may carry a burst over the
        // boundary, and the counts are then those of other windows. Seen from the clock before
        // and after each burst (the script reads the server's TIME between them, on this
        // machine's clock), such a try is made again on a new key, ten times at most; a try that
        // ran as planned is judged, and none in ten is a failure of its own
        int late = 0;
        int early = 0;
        boolean asPlanned = false;
        for (int attempt = 1; attempt <= 10 && !asPlanned; attempt++) {
            String key = "slide-" + attempt;
            WindowGuard.awayFromBoundary(1000, 1000);
            long now = System.currentTimeMillis();
            Thread.sleep(1000 - now % 1000 + 850);
            late = 0;
            long lateStart = System.currentTimeMillis();
            for (int i = 0; i < 20; i++) {
                late += Outcome.isAllowed(limiter.acquire(key)) ? 1 : 0;
            }
            long lateEnd = System.currentTimeMillis();
            now = System.currentTimeMillis();
            Thread.sleep(1000 - now % 1000 + 5);
            early = 0;
            long earlyStart = System.currentTimeMillis();
            for (int i = 0; i < 20; i++) {
                early += Outcome.isAllowed(limiter.acquire(key)) ? 1 : 0;
            }
            long earlyEnd = System.currentTimeMillis();
            long second = lateStart / 1000;
            // the early burst within the first 100 ms: later, the previous second's share has
            // faded enough to let a second call through, rightly
            asPlanned = lateEnd / 1000 == second && earlyStart / 1000 == second + 1 && earlyEnd / 1000 == second + 1
                    && earlyEnd % 1000 < 100;
            if (!asPlanned) {
                System.out.println("theSlidingWindowAllowsNoDoubleBurstAcrossTheBoundary: a burst crossed a second or the"
                        + " early one ended past 100 ms (" + lateStart % 1000 + ".." + lateEnd % 1000 + ", "
                        + earlyStart % 1000 + ".." + earlyEnd % 1000 + " ms into the seconds), again on a new key");
            }
        }
        assertTrue(asPlanned, "no try in ten ran its bursts where they were meant to be: the machine was too slow");
        assertEquals(10, late);
        assertTrue(early <= 1, "allowed " + early + " right after the boundary");
    }

    @Test
    void aPasswordAndADatabaseNumberInTheUriAreUsedAndTheMaskedUriHidesThePassword() throws Exception {
        String password = "s3cret-redis-password-77";
        try (RedisServer secured = RedisServer.start(List.of("--requirepass", password))) {
            String uri = "redis://:" + password + "@127.0.0.1:" + secured.port() + "/3";
            RuleSet rules = ConfigLoader.parse(String.join("\n",
                    "version: 1",
                    "store:",
                    "  type: redis",
                    "  redis:",
                    "    uri: ${env:REDIS_URI}",
                    "rules:",
                    "  - {name: r, key: arg0, limit: 1, window: 1h}",
                    ""), "rules.yaml", Path.of("."), name -> name.equals("REDIS_URI") ? uri : null);
            assertFalse(rules.store().redis().maskedUri().contains(password));
            assertFalse(rules.store().redis().toString().contains(password));
            try (RedisStore secure = new RedisStore(rules.store().redis())) {
                RedisLimiter limiter = new RedisLimiter(secure, rules.rules().get(0));
                assertTrue(Outcome.isAllowed(limiter.acquire("k")));
                assertFalse(Outcome.isAllowed(limiter.acquire("k")));
            }
            try (Jedis jedis = secured.client()) {
                jedis.auth(password);
                jedis.select(3);
                assertEquals(Set.of("rl:{r|k}:fixed-window:1h"), jedis.keys("rl:*"));
            }
        }
    }

    static int race(Callable<Boolean> call) throws Exception {
        return Race.passed(pool, THREADS, call);
    }
}
