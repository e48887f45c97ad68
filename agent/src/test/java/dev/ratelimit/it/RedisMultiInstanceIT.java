package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.testing.Race;
import dev.ratelimit.testing.RedisServer;
import dev.ratelimit.testing.WindowGuard;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import redis.clients.jedis.Jedis;

/**
 * Issue 4, multi-instance exactness: several JVMs under the agent share one Redis store
 * ({@code store: type: redis}), so a limit of 50 lets exactly 50 calls through in total, however
 * many instances the calls are spread over, when they all arrive at once; and the counters leave
 * Redis when their window ends.
 *
 * <p>Every instance is a forked JVM running the finished agent jar: {@code SharedCounterMain}
 * (a plain method under a YAML rule) or the Spring Boot test-app. The instances are given one
 * wall-clock instant per round and release 100 threads each at that instant.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisMultiInstanceIT {
    private static final int LIMIT = 50;
    private static final int THREADS_PER_INSTANCE = 100;
    private static final int ROUNDS = 12;
    /** Rounds of the two Spring Boot instances' burst (each a few hundred milliseconds). */
    private static final int HTTP_ROUNDS = 20;
    private static final long PERIOD_MILLIS = 1_000;
    /** Time for the forked JVMs to start and reach round 1 before its instant. */
    private static final long STARTUP_ALLOWANCE_MILLIS = 15_000;
    private static final long HOUR = 3_600_000;
    private static final Pattern ROUND_LINE = Pattern.compile(
            "(?m)^ROUND (\\d+) PASSED (\\d+) REJECTED (\\d+) ERRORS (\\d+) LATE_MS (\\d+)\\s*$");
    /** Printed nowhere, warm-up included. */
    private static final List<String> FORBIDDEN_OUTPUT = List.of(
            "could not instrument", "internal error", "first unexpected outcome");
    /** Warm-up before the measured rounds: bursts of these sizes, this long before round 1. */
    private static final String WARMUP = "0";
    private static final long WARMUP_BEFORE_MILLIS = 4_000;
    /** The forked JVMs log with the epoch millis first, so the test can tell warm-up from measured rounds. */
    private static final String LOG_FORMAT = "-Djava.util.logging.SimpleFormatter.format=%1$tQ %4$s %5$s%6$s%n";
    private static final Pattern LOG_LINE = Pattern.compile("(?m)^(\\d{13}) (WARNING|SEVERE|ERROR) (.*)$");

    /** Warnings logged before round 1 (warm-up), for the report. */
    private static final List<String> COLD_START_WARNINGS = new CopyOnWriteArrayList<>();

    private RedisServer redis;
    private Path work;

    @BeforeAll
    void startRedis() throws Exception {
        redis = RedisServer.start();
        work = Files.createTempDirectory("redis-multi-instance");
    }

    @AfterAll
    void stopRedis() throws Exception {
        System.out.println("RedisMultiInstanceIT warnings logged during warm-up (before round 1): "
                + COLD_START_WARNINGS.size() + (COLD_START_WARNINGS.isEmpty() ? "" : "\n  "
                + String.join("\n  ", COLD_START_WARNINGS)));
        if (redis != null) {
            redis.close();
        }
    }

    /** Three JVMs on each JDK, then (with a second JDK) a mixed set: 1 and 3 on the first, 2 on the second. */
    Stream<Arguments> jvmSets() {
        List<Path> jdks = Jdks.all().collect(Collectors.toList());
        List<Arguments> sets = new ArrayList<>();
        for (Path jdk : jdks) {
            sets.add(Arguments.of(jdk.getFileName().toString(), List.of(jdk, jdk, jdk)));
        }
        if (jdks.size() > 1) {
            Path first = jdks.get(0);
            Path second = jdks.get(1);
            sets.add(Arguments.of("mixed " + first.getFileName() + "/" + second.getFileName() + "/"
                    + first.getFileName(), List.of(first, second, first)));
        }
        return sets.stream();
    }

    // ---- 1. method rule, three JVMs --------------------------------------------------------

    @ParameterizedTest(name = "three JVMs: {0}")
    @MethodSource("jvmSets")
    void threeJvmsShareOneMethodLimitExactly(String label, List<Path> jdks) throws Exception {
        Path rules = rules("method-1h", methodRule("shared-hit", "1h"));
        String prefix = "m" + System.nanoTime();
        // every round must fall in one 1h window: start at least two minutes before its end
        WindowGuard.awayFromBoundary(HOUR, 120_000);
        long base = System.currentTimeMillis() + STARTUP_ALLOWANCE_MILLIS;
        List<ForkedJvm.Result> results = runInstances(jdks, rules, ROUNDS, base, PERIOD_MILLIS, prefix, "shared-hit");

        List<Map<Integer, int[]>> rounds = new ArrayList<>();
        for (int i = 0; i < results.size(); i++) {
            rounds.add(checkInstance("JVM " + (i + 1) + " on " + jdks.get(i), results.get(i), ROUNDS, base));
        }
        List<Integer> sums = new ArrayList<>();
        long hourLeftAtEnd = HOUR - System.currentTimeMillis() % HOUR;
        try (Jedis jedis = redis.client()) {
            for (int round = 1; round <= ROUNDS; round++) {
                int sum = 0;
                StringBuilder split = new StringBuilder();
                for (Map<Integer, int[]> instance : rounds) {
                    sum += instance.get(round)[0];
                    split.append(' ').append(instance.get(round)[0]);
                }
                sums.add(sum);
                String detail = label + " round " + round + ": passed per JVM" + split + "\n" + describe(results);
                assertEquals(LIMIT, sum, detail);
                // one key with its window's expiry, holding the allowed calls: each refused call was
                // counted and taken back out, none lost (a lost increment or decrement shows here)
                String key = "rl:{shared-hit|" + prefix + "-r" + round + "}:fixed-window:1h";
                assertEquals(String.valueOf(LIMIT), jedis.hget(key, "c"), key + "; " + detail);
                long ttl = jedis.pttl(key);
                assertTrue(ttl > 0 && ttl <= hourLeftAtEnd + 1_000,
                        key + " must expire at the end of its hour (" + hourLeftAtEnd + " ms away), PTTL " + ttl);
            }
        }
        System.out.println("RedisMultiInstanceIT method " + label + ": per-round sums " + sums
                + ", per JVM " + rounds.stream().map(RedisMultiInstanceIT::passedPerRound).collect(Collectors.toList())
                + ", release lateness (ms) " + rounds.stream().map(RedisMultiInstanceIT::latenessPerRound)
                        .collect(Collectors.toList()));
    }

    // ---- 2. HTTP, two Spring Boot instances ------------------------------------------------

    @Test
    void twoSpringBootInstancesShareOneHttpLimitExactly() throws Exception {
        Path rules = rules("http-1h", "client:\n"
                + "  trusted-proxies: [127.0.0.1/32]\n"
                + "rules:\n"
                + "  - name: domains-shared\n"
                + "    match:\n"
                + "      http:\n"
                + "        path: /api/domains/**\n"
                + "    key: client-ip\n"
                + "    limit: " + LIMIT + "\n"
                + "    window: 1h\n");
        List<Path> jdks = Jdks.all().collect(Collectors.toList());
        Path jdkA = jdks.get(0);
        Path jdkB = jdks.get(jdks.size() - 1);
        ExecutorService starter = Executors.newFixedThreadPool(2);
        Future<WebApp> startingA = starter.submit(
                () -> WebApp.start(WebApp.Container.SPRING_BOOT, jdkA, rules, Map.of(), List.of()));
        Future<WebApp> startingB = starter.submit(
                () -> WebApp.start(WebApp.Container.SPRING_BOOT, jdkB, rules, Map.of(), List.of()));
        starter.shutdown();
        List<String> figures = new ArrayList<>();
        try (WebApp a = startingA.get(); WebApp b = startingB.get()) {
            WebApp[] apps = {a, b};
            ExecutorService pool = Executors.newFixedThreadPool(2 * LIMIT);
            // warm-up on a client of its own: the agent's Redis client loads and opens its connections
            for (WebApp app : apps) {
                app.getFrom("127.0.0.1", "/api/domains/shop.example.com", "X-Forwarded-For: 203.0.113.200");
            }
            List<Future<Integer>> warmup = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                WebApp app = apps[i % 2];
                warmup.add(pool.submit(() -> app.getFrom("127.0.0.1", "/api/domains/shop.example.com",
                        "X-Forwarded-For: 203.0.113.201").status));
            }
            for (Future<Integer> status : warmup) {
                status.get();
            }
            int[] outputSeen = {a.stdout().length(), a.stderr().length(), b.stdout().length(), b.stderr().length()};
            try (Jedis jedis = redis.client()) {
                WindowGuard.awayFromBoundary(HOUR, 120_000);
                for (int round = 1; round <= HTTP_ROUNDS; round++) {
                    String client = "203.0.113." + (10 + round);
                    // even threads call A, odd ones B
                    int[] statuses = Race.each(pool, 2 * LIMIT, i -> apps[i % 2].getFrom("127.0.0.1",
                            "/api/domains/shop.example.com", "X-Forwarded-For: " + client).status);
                    int[][] byApp = new int[2][2];
                    Map<Integer, Integer> counts = new TreeMap<>();
                    for (int i = 0; i < statuses.length; i++) {
                        int status = statuses[i];
                        counts.merge(status, 1, Integer::sum);
                        if (status == 200) {
                            byApp[i % 2][0]++;
                        } else if (status == 429) {
                            byApp[i % 2][1]++;
                        }
                    }
                    String detail = "round " + round + " client " + client + ": statuses " + counts
                            + ", 200s on A/B " + byApp[0][0] + "/" + byApp[1][0] + "\n" + a.output() + "\n" + b.output();
                    assertEquals(Map.of(200, LIMIT, 429, LIMIT), counts, detail);
                    String key = "rl:{domains-shared|" + client + "}:fixed-window:1h";
                    // the refused requests were taken back out of the count
                    assertEquals(String.valueOf(LIMIT), jedis.hget(key, "c"), key + "; " + detail);
                    figures.add("round " + round + ": 200s " + (byApp[0][0] + byApp[1][0]) + " (A " + byApp[0][0]
                            + ", B " + byApp[1][0] + "), 429s " + (byApp[0][1] + byApp[1][1]));
                }
            } finally {
                pool.shutdownNow();
            }
            for (int i = 0; i < apps.length; i++) {
                WebApp app = apps[i];
                for (String forbidden : List.of("could not instrument", "internal error")) {
                    assertFalse(app.output().contains(forbidden), forbidden + " in\n" + app.output());
                }
                // the store must not have failed once the measured rounds began
                String measured = app.stdout().substring(outputSeen[2 * i]) + app.stderr().substring(outputSeen[2 * i + 1]);
                assertFalse(measured.contains("rate-limit-agent: Redis"), "during the rounds:\n" + measured);
                if (app.output().contains("is not answering")) {
                    COLD_START_WARNINGS.add("http instance " + (char) ('A' + i) + " during warm-up: Redis 'is not answering'");
                }
                assertTrue(app.isAlive(), app::output);
            }
        }
        System.out.println("RedisMultiInstanceIT http (A on " + jdkA.getFileName() + ", B on " + jdkB.getFileName()
                + "): " + figures);
    }

    // ---- 3. expiry across instances ----------------------------------------------------------

    @Test
    void countersLeaveRedisWhenTheirWindowEnds() throws Exception {
        Path rules = rules("method-1s", methodRule("shared-hit-1s", "1s"));
        List<Path> jdks = Jdks.all().collect(Collectors.toList());
        List<Path> instances = List.of(jdks.get(0), jdks.get(jdks.size() - 1));
        String prefix = "e" + System.nanoTime();
        String pattern = "rl:{shared-hit-1s|" + prefix + "-r*";
        int rounds = 3;
        // release each round 300 ms into a second, so a burst stays inside one 1s window; and not
        // in an hour's last minute, which ForkedJvm.run would wait out after the instant was set
        WindowGuard.awayFromBoundary(HOUR, 120_000);
        long base = (System.currentTimeMillis() + STARTUP_ALLOWANCE_MILLIS) / 1_000 * 1_000 + 300;

        AtomicBoolean polling = new AtomicBoolean(true);
        Set<String> seen = ConcurrentHashMap.newKeySet();
        AtomicLong maxTtl = new AtomicLong(Long.MIN_VALUE);
        List<String> withoutExpiry = new CopyOnWriteArrayList<>();
        AtomicInteger polls = new AtomicInteger();
        Thread poller = new Thread(() -> {
            try (Jedis jedis = redis.client()) {
                while (polling.get()) {
                    for (String key : jedis.keys(pattern)) {
                        seen.add(key);
                        long ttl = jedis.pttl(key);
                        if (ttl == -1) {
                            withoutExpiry.add(key);
                        }
                        maxTtl.accumulateAndGet(ttl, Math::max);
                    }
                    polls.incrementAndGet();
                    Thread.sleep(5);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "redis-key-poller");
        poller.start();
        List<ForkedJvm.Result> results;
        try {
            results = runInstances(instances, rules, rounds, base, PERIOD_MILLIS, prefix, "shared-hit-1s");
        } finally {
            polling.set(false);
            poller.join(5_000);
        }
        List<Integer> sums = new ArrayList<>();
        List<Map<Integer, int[]>> perInstance = new ArrayList<>();
        for (int i = 0; i < results.size(); i++) {
            perInstance.add(checkInstance("JVM " + (i + 1) + " on " + instances.get(i), results.get(i), rounds, base));
        }
        for (int round = 1; round <= rounds; round++) {
            int sum = 0;
            for (Map<Integer, int[]> instance : perInstance) {
                sum += instance.get(round)[0];
            }
            sums.add(sum);
            assertEquals(LIMIT, sum, "1s window, round " + round + "\n" + describe(results));
        }
        Set<String> expected = new java.util.TreeSet<>();
        for (int round = 1; round <= rounds; round++) {
            expected.add("rl:{shared-hit-1s|" + prefix + "-r" + round + "}:fixed-window:1s");
        }
        assertEquals(expected, new java.util.TreeSet<>(seen), "keys seen while the instances ran (" + polls + " polls)");
        assertEquals(List.of(), withoutExpiry, "counters without an expiry");
        assertTrue(maxTtl.get() > 0 && maxTtl.get() <= 1_000, "a 1s counter must expire within 1s, PTTL " + maxTtl);

        Thread.sleep(2_500);
        try (Jedis jedis = redis.client()) {
            assertEquals(Set.of(), jedis.keys(pattern), "1s counters still in Redis 2.5 s after their window");
            for (String key : jedis.keys("*")) {
                assertTrue(jedis.pttl(key) > 0, key + " has no expiry");
            }
        }
        System.out.println("RedisMultiInstanceIT expiry: per-round sums " + sums + ", keys seen " + seen.size()
                + ", max PTTL seen " + maxTtl + " ms, none left after 2.5 s");
    }

    // ---- helpers ---------------------------------------------------------------------------

    private static String methodRule(String name, String window) {
        return "rules:\n"
                + "  - name: " + name + "\n"
                + "    match:\n"
                + "      method: dev.ratelimit.fixture.SharedCounter#hit\n"
                + "    key: arg0\n"
                + "    limit: " + LIMIT + "\n"
                + "    window: " + window + "\n";
    }

    /**
     * A rule file on the Redis store of this class's server (its port is only known now). Its
     * timeout is long: these tests are about exact counts, and a store that does not answer in
     * time fails a call (which the checks refuse). Three JVMs of 100 threads each on two cores can
     * keep a thread holding a pooled connection off the CPU for a second: a run beside another
     * build had a call wait more than 1 s for a free connection, with the round released 589 ms
     * late.
     */
    private Path rules(String name, String rest) throws Exception {
        String yaml = "version: 1\n"
                + "store:\n"
                + "  type: redis\n"
                + "  redis:\n"
                + "    uri: " + redis.uri() + "\n"
                + "    timeout: 5s\n"
                + rest;
        Path file = work.resolve(name + ".yaml");
        Files.writeString(file, yaml, StandardCharsets.UTF_8);
        return file;
    }

    /** Runs one SharedCounterMain per JDK given, all at once, and waits for all of them. */
    private static List<ForkedJvm.Result> runInstances(List<Path> jdks, Path rules, int rounds, long base, long period,
            String prefix, String rule) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(jdks.size());
        try {
            List<Future<ForkedJvm.Result>> running = new ArrayList<>();
            for (Path jdk : jdks) {
                running.add(pool.submit(() -> ForkedJvm.run(jdk, List.of(
                        LOG_FORMAT,
                        "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                        "-cp", ForkedJvm.applicationClassPath(),
                        "dev.ratelimit.fixture.SharedCounterMain",
                        Integer.toString(rounds), Long.toString(base), Long.toString(period), prefix,
                        Integer.toString(THREADS_PER_INSTANCE), rule, WARMUP, Long.toString(base - WARMUP_BEFORE_MILLIS)),
                        Duration.ofMinutes(2))));
            }
            List<ForkedJvm.Result> results = new ArrayList<>();
            for (Future<ForkedJvm.Result> result : running) {
                results.add(result.get());
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Checks one instance ran cleanly and returns its rounds: round number to
     * {passed, rejected, errors, lateMillis}.
     */
    private static Map<Integer, int[]> checkInstance(String name, ForkedJvm.Result result, int rounds, long base) {
        assertEquals(0, result.exitCode, () -> name + "\n" + result);
        assertEquals("true", result.results().get("done"), () -> name + "\n" + result);
        assertEquals("0", result.results().get("agentErrors"), () -> name + "\n" + result);
        assertEquals("0", result.results().get("transformationErrors"), () -> name + "\n" + result);
        for (String forbidden : FORBIDDEN_OUTPUT) {
            assertFalse(result.stderr.contains(forbidden) || result.stdout.contains(forbidden),
                    () -> name + " printed '" + forbidden + "'\n" + result);
        }
        // the store must not have failed once the measured rounds began (warm-up is the agent's cold start)
        Matcher log = LOG_LINE.matcher(result.stderr);
        while (log.find()) {
            long at = Long.parseLong(log.group(1));
            String line = log.group();
            if (at >= base) {
                throw new AssertionError(name + " logged during the measured rounds: " + line + "\n" + result);
            }
            COLD_START_WARNINGS.add(name + " " + (at - base) + " ms: " + log.group(3));
        }
        Map<Integer, int[]> byRound = new TreeMap<>();
        Matcher m = ROUND_LINE.matcher(result.stdout);
        while (m.find()) {
            byRound.put(Integer.parseInt(m.group(1)), new int[] {Integer.parseInt(m.group(2)),
                    Integer.parseInt(m.group(3)), Integer.parseInt(m.group(4)), Integer.parseInt(m.group(5))});
        }
        assertEquals(rounds, byRound.size(), () -> name + " rounds\n" + result);
        for (Map.Entry<Integer, int[]> round : byRound.entrySet()) {
            int[] r = round.getValue();
            assertEquals(0, r[2], () -> name + " round " + round.getKey() + ": calls neither passed nor rejected\n" + result);
            assertEquals(THREADS_PER_INSTANCE, r[0] + r[1], () -> name + " round " + round.getKey() + "\n" + result);
            // the instances must have fired together: a JVM that missed the instant ran its burst alone
            assertTrue(r[3] < PERIOD_MILLIS / 2, () -> name + " released round " + round.getKey() + " " + r[3]
                    + " ms late (raise STARTUP_ALLOWANCE_MILLIS on a slow machine)\n" + result);
        }
        assertNotNull(byRound.get(1));
        return byRound;
    }

    private static List<Integer> passedPerRound(Map<Integer, int[]> rounds) {
        return rounds.values().stream().map(r -> r[0]).collect(Collectors.toList());
    }

    private static List<Integer> latenessPerRound(Map<Integer, int[]> rounds) {
        return rounds.values().stream().map(r -> r[3]).collect(Collectors.toList());
    }

    private static String describe(List<ForkedJvm.Result> results) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < results.size(); i++) {
            text.append("--- JVM ").append(i + 1).append(": ").append(results.get(i)).append('\n');
        }
        return text.toString();
    }
}
