package dev.ratelimit.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.testing.RedisServer;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * The sliding-window script's carried share, {@code previous * left / window} rounded down, run
 * by a real redis-server's Lua: exact as the Java decision's (SlidingWindowArithmeticTest), where
 * Lua's doubles round a product past 2^53. A share one more than the decision's took back a call
 * the decision allowed (allowed and not counted); one less kept a call it refused.
 */
class RedisSlidingWindowScriptTest {
    private static final long YEAR = 366L * 86_400_000L;
    private static final long TWO_TO_53 = 1L << 53;
    private static RedisServer server;

    @BeforeAll
    static void start() throws Exception {
        server = RedisServer.start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void theScriptsShareIsExactWhereDoublesRound() {
        SplittableRandom random = new SplittableRandom(17);
        List<long[]> cases = new ArrayList<>();
        // one short of a multiple of the window, where a double's quotient rounds up to the next call
        while (cases.size() < 3_000) {
            long c = 86_400_000L + random.nextLong(YEAR - 86_400_000L);
            long a = 1_000_000L + random.nextLong(1_000_000_000_000L);
            BigInteger bc = BigInteger.valueOf(c);
            if (BigInteger.valueOf(a).gcd(bc).equals(BigInteger.ONE)) {
                long b = BigInteger.valueOf(a).modInverse(bc).multiply(BigInteger.valueOf(c - 1)).mod(bc).longValueExact();
                cases.add(new long[] {a, b, c});
            }
        }
        // anywhere in the script's range: a count below 2^53, a window below 2^52 ms
        while (cases.size() < 9_000) {
            long c = 1 + random.nextLong(cases.size() % 2 == 0 ? YEAR : 1L << 52);
            cases.add(new long[] {random.nextLong(TWO_TO_53), random.nextLong(c + 1), c});
        }
        // small products, where the script divides at once
        while (cases.size() < 10_000) {
            long c = 1 + random.nextLong(3_600_000);
            cases.add(new long[] {random.nextLong(1_000_000), random.nextLong(c + 1), c});
        }
        cases.add(new long[] {0, 5, 7});
        cases.add(new long[] {TWO_TO_53 - 1, YEAR, YEAR});
        cases.add(new long[] {TWO_TO_53 - 1, YEAR - 1, YEAR});
        cases.add(new long[] {1, 0, 1});

        String function = function(RedisScript.load("sliding-window.lua").text);
        int rounded = 0;
        try (Jedis jedis = server.client()) {
            for (int from = 0; from < cases.size(); from += 1_000) {
                List<long[]> batch = cases.subList(from, Math.min(cases.size(), from + 1_000));
                String[] args = new String[3 * batch.size()];
                for (int i = 0; i < batch.size(); i++) {
                    for (int j = 0; j < 3; j++) {
                        args[3 * i + j] = Long.toString(batch.get(i)[j]);
                    }
                }
                @SuppressWarnings("unchecked")
                List<Long> shares = (List<Long>) jedis.eval(function + "\nlocal out = {}\n"
                        + "for i = 1, #ARGV, 3 do\n"
                        + "  out[#out + 1] = mul_div(tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]))\n"
                        + "end\nreturn out", 0, args);
                for (int i = 0; i < batch.size(); i++) {
                    long a = batch.get(i)[0], b = batch.get(i)[1], c = batch.get(i)[2];
                    BigInteger exact = BigInteger.valueOf(a).multiply(BigInteger.valueOf(b)).divide(BigInteger.valueOf(c));
                    assertEquals(exact.longValueExact(), shares.get(i), a + " * " + b + " / " + c);
                    if ((long) Math.floor((double) a * (double) b / (double) c) != exact.longValueExact()) {
                        rounded++;
                    }
                }
            }
        }
        // the cases include many that the doubles got wrong
        assertTrue(rounded > 1_000, rounded + " cases where doubles round");
    }

    /** The script's {@code mul_div}, as shipped: from its {@code local function} line to its {@code end}. */
    private static String function(String script) {
        int start = script.indexOf("local function mul_div(");
        int end = script.indexOf("\nend\n", start);
        assertTrue(start >= 0 && end > start, "the script defines mul_div");
        return script.substring(start, end + 5);
    }
}
