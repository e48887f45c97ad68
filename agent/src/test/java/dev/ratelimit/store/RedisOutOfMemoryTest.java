package dev.ratelimit.store;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.config.RuleSet;
import dev.ratelimit.limit.StoreUnavailableException;
import dev.ratelimit.testing.RedisServer;
import java.util.List;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * README, "Shared limits": with a {@code maxmemory}, use {@code noeviction}; a full Redis then
 * refuses the script, and the call is a store failure that the rule's {@code on-error} decides,
 * with nothing written (a counter evicted instead would start afresh).
 */
class RedisOutOfMemoryTest {
    @Test
    void aFullRedisWithoutEvictionRefusesTheCallAsAFailure() throws Exception {
        try (RedisServer server = RedisServer.start(List.of("--maxmemory", "2mb", "--maxmemory-policy", "noeviction"))) {
            boolean full = false;
            try (Jedis jedis = server.client()) {
                String filler = "x".repeat(10_000);
                for (int i = 0; i < 10_000 && !full; i++) {
                    try {
                        jedis.set("filler-" + i, filler);
                    } catch (JedisDataException oom) {
                        full = oom.getMessage().startsWith("OOM");
                    }
                }
            }
            assertTrue(full, "the server refused writes once full");
            // full by a margin: right at the limit, memory the filler's connection gave back on
            // closing let a small write through now and then (the script ran, once in a CI run)
            try (Jedis jedis = server.client()) {
                jedis.configSet("maxmemory", "1mb");
            }
            RuleSet rules = RedisLimiterTest.rules(server, "fixed-window", "    limit: 3\n    window: 1h");
            try (RedisStore store = new RedisStore(rules.store().redis())) {
                RedisLimiter limiter = new RedisLimiter(store, rules.rules().get(0));
                StoreUnavailableException failed = assertThrows(StoreUnavailableException.class, () -> limiter.acquire("k"));
                assertTrue(failed.getMessage().contains("OOM"), failed.getMessage());
            }
            try (Jedis jedis = server.client()) {
                assertFalse(jedis.exists("rl:{r|k}:fixed-window:1h"), "nothing written");
            }
        }
    }
}
