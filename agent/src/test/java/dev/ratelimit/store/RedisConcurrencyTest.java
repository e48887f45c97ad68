package dev.ratelimit.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.config.Algorithm;
import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.limit.ActiveRule;
import dev.ratelimit.limit.Outcome;
import dev.ratelimit.testing.Race;
import dev.ratelimit.testing.RedisServer;
import dev.ratelimit.testing.WindowGuard;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import redis.clients.jedis.Jedis;

/**
 * Latch races against a real Redis on the paths the concurrency audit of the twenty-third round
 * found proven one call at a time: a rule's several limits with their refunds, and each
 * {@code on-error} while the server is up, down and back.
 */
class RedisConcurrencyTest {
    private static final int THREADS = 100;
    private static ExecutorService pool;

    @BeforeAll
    static void startThreads() {
        pool = Executors.newFixedThreadPool(THREADS);
    }

    @AfterAll
    static void stopThreads() {
        pool.shutdownNow();
    }

    @BeforeEach
    void wellInsideAWindow() {
        WindowGuard.awayFromBoundary(3_600_000, 60_000);
    }

    private static RuleSet rules(RedisServer server, String algorithm, String limits) throws Exception {
        return ConfigLoader.parse(String.join("\n", "version: 1", "store:", "  type: redis", "  redis:",
                "    uri: " + server.uri(), "    timeout: 500ms", "rules:",
                "  - name: r", "    key: arg0", "    algorithm: " + algorithm, limits,
                "  - name: open", "    key: arg0", "    limit: 5", "    window: 1h", "    on-error: allow",
                "  - name: shut", "    key: arg0", "    limit: 5", "    window: 1h", "    on-error: reject",
                ""), "rules.yaml", Path.of("."), name -> null);
    }

    /**
     * 100 calls at once under {5 an hour, 6 a day}: 5 pass, and both counts in Redis hold those
     * 5 (the script takes refused calls back out of every limit, the one that refused them too),
     * every round.
     */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW"})
    void aBurstRefusedByOneLimitLeavesTheOtherAtTheCallsAllowed(Algorithm algorithm) throws Exception {
        List<String> wrong = new ArrayList<>();
        try (RedisServer server = RedisServer.start()) {
            RuleSet set = rules(server, algorithm.yamlName(), "    limits:\n      - {limit: 5, window: 1h}\n"
                    + "      - {limit: 6, window: 1d}");
            try (RedisStore store = new RedisStore(set.store().redis())) {
                RedisLimiter limiter = new RedisLimiter(store, set.rule("r").orElseThrow());
                for (int round = 0; round < 200; round++) {
                    String key = algorithm + "-" + round;
                    int passed = Race.passed(pool, THREADS, () -> Outcome.isAllowed(limiter.acquire(key)));
                    String day;
                    String hour;
                    try (Jedis jedis = server.client()) {
                        day = jedis.hget("rl:{r|" + key + "}:" + algorithm.yamlName() + ":1d", "c");
                        hour = jedis.hget("rl:{r|" + key + "}:" + algorithm.yamlName() + ":1h", "c");
                    }
                    if (passed != 5 || !"5".equals(day) || !"5".equals(hour)) {
                        wrong.add("round " + round + ": " + passed + " passed, the day's count " + day
                                + ", the hour's " + hour);
                    }
                }
            }
        }
        assertEquals(List.of(), wrong);
    }

    /**
     * Under a latch, each on-error does what it says while the server is up (exactly 5), down
     * (allow: all 100; reject: none) and back (exactly 5 again).
     */
    @Test
    void eachOnErrorHoldsUnderALatchWhileTheServerIsUpDownAndBack() throws Exception {
        List<String> wrong = new ArrayList<>();
        try (RedisServer server = RedisServer.start()) {
            RuleSet set = rules(server, "fixed-window", "    limit: 5\n    window: 1h");
            try (RedisStore store = new RedisStore(set.store().redis())) {
                ActiveRule open = new ActiveRule(set.rule("open").orElseThrow(),
                        new RedisLimiter(store, set.rule("open").orElseThrow()));
                ActiveRule shut = new ActiveRule(set.rule("shut").orElseThrow(),
                        new RedisLimiter(store, set.rule("shut").orElseThrow()));
                rounds("up", open, shut, 5, 5, wrong);
                server.stop();
                rounds("down", open, shut, THREADS, 0, wrong);
                server.restart();
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (!store.isUp() && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertTrue(store.isUp(), "the store came back");
                rounds("back", open, shut, 5, 5, wrong);
            }
        }
        assertEquals(List.of(), wrong);
    }

    private static void rounds(String phase, ActiveRule open, ActiveRule shut, int openPass, int shutPass,
            List<String> wrong) throws Exception {
        for (int round = 0; round < 50; round++) {
            Object[] args = {phase + "-" + round};
            int opened = Race.passed(pool, THREADS, () -> Outcome.isAllowed(open.decide(args, null)));
            int shutPassed = Race.passed(pool, THREADS, () -> Outcome.isAllowed(shut.decide(args, null)));
            if (opened != openPass || shutPassed != shutPass) {
                wrong.add(phase + " round " + round + ": on-error allow " + opened + ", reject " + shutPassed);
            }
        }
    }
}
