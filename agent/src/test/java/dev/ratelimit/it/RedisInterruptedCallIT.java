package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.testing.RedisServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application's interrupt is not meant for the agent: a thread that is interrupted when it
 * calls a method under a Redis rule gets its call answered, and is still interrupted after it.
 * On a virtual thread (Java 21 and later) an interrupted thread's socket I/O closes the socket:
 * the agent's call to Redis failed, and the rule's on-error (reject here) refused the call.
 */
class RedisInterruptedCallIT {
    @TempDir
    Path dir;

    @Test
    void anInterruptedThreadsCallIsAnsweredAndTheThreadStaysInterrupted() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            Path rules = rules(server, "interrupted-hit", "2s");
            for (Path jdk : Jdks.all().toList()) {
                ForkedJvm.Result result = run(jdk, rules, "InterruptedCallsMain", "interrupted-" + jdk.getFileName());
                assertEquals(0, result.exitCode, result::toString);
                assertTrue(result.stdout.contains("RESULT answered=5 interrupted=5 "), result::toString);
            }
        }
    }

    /**
     * An interrupt that comes while the call waits for the server's answer: on a virtual thread it
     * closed the connection's socket, so the call failed (its rule's on-error rejected it) and the
     * connection was lost, one new connection per interrupt (a fan-out that cancels its losers,
     * invokeAny, interrupted hundreds a second, and the churn marked a healthy store down). The
     * call is answered, as on a platform thread, and the thread is still interrupted after it.
     */
    @Test
    void anInterruptDuringTheCallNeitherFailsItNorClosesItsConnection() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            Path rules = rules(server, "interrupted-mid-call", "3s");
            for (Path jdk : Jdks.all().toList()) {
                ForkedJvm.Result result = run(jdk, rules, "InterruptedMidCallMain", "mid-call-" + jdk.getFileName(),
                        Integer.toString(server.port()));
                assertEquals(0, result.exitCode, result::toString);
                assertTrue(result.stdout.contains("RESULT answered=3 interrupted=3 opened=0 "), result::toString);
            }
        }
    }

    /**
     * The same interrupt while the idle check's PING waits (the pool's connection sat idle past
     * it): on a virtual thread the PING ran on the calling thread, the interrupt closed its socket,
     * and the check took the connection for closed and dropped it (the review of the thirty-fourth
     * round's fixes). The PING runs where the command runs; the call is answered on the same
     * connection, and the thread is still interrupted after it.
     */
    @Test
    void anInterruptDuringTheIdleCheckNeitherFailsTheCallNorClosesItsConnection() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            Path rules = rules(server, "interrupted-idle-check", "3s");
            boolean sawVirtual = false;
            for (Path jdk : Jdks.all().toList()) {
                ForkedJvm.Result result = run(jdk, rules, "InterruptedMidCallMain", "idle-check-" + jdk.getFileName(),
                        Integer.toString(server.port()), "idle");
                assertEquals(0, result.exitCode, result::toString);
                assertTrue(result.stdout.contains("RESULT answered=3 interrupted=3 opened=0 "), result::toString);
                sawVirtual |= result.stdout.contains(" virtual=true");
            }
            assertTrue(sawVirtual, "no JDK with virtual threads among the tests' JDKs");
        }
    }

    /**
     * A call on a virtual thread, whose command runs on one of the store's threads, still ends
     * within the store's timeout (plus a margin) when the server stalls, and its rule's on-error
     * decides it: the calling thread waits for the command no longer than the call's deadline.
     */
    @Test
    void aVirtualThreadsCallToAStalledServerEndsWithinTheTimeout() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            Path rules = rules(server, "stalled", "300ms");
            boolean sawVirtual = false;
            for (Path jdk : Jdks.all().toList()) {
                ForkedJvm.Result result = run(jdk, rules, "StalledServerCallMain", "stalled-" + jdk.getFileName(),
                        Integer.toString(server.port()));
                assertEquals(0, result.exitCode, result::toString);
                assertTrue(result.stdout.contains("RESULT rejected=true"), result::toString);
                sawVirtual |= result.stdout.contains(" virtual=true");
                java.util.regex.Matcher millis = java.util.regex.Pattern.compile("RESULT millis=(\\d+)")
                        .matcher(result.stdout);
                assertTrue(millis.find(), result::toString);
                long took = Long.parseLong(millis.group(1));
                assertTrue(took >= 290 && took <= 300 + 150, () -> "the call took " + took + " ms: " + result);
            }
            assertTrue(sawVirtual, "no JDK with virtual threads among the tests' JDKs");
        }
    }

    /** A rule file of one rule on SharedCounter#hit, keyed on its argument, on the server, rejecting on errors. */
    private Path rules(RedisServer server, String rule, String timeout) throws java.io.IOException {
        return Files.writeString(dir.resolve(rule + ".yaml"), String.join("\n",
                "version: 1",
                "store:",
                "  type: redis",
                "  on-error: reject",
                "  redis:",
                "    uri: " + server.uri(),
                "    timeout: " + timeout,
                "rules:",
                "  - name: " + rule,
                "    match:",
                "      method: dev.ratelimit.fixture.SharedCounter#hit",
                "    key: arg0",
                "    limit: 1000",
                "    window: 1h",
                ""));
    }

    /** The fixture {@code main} under the agent with {@code rules} on {@code jdk}. */
    private static ForkedJvm.Result run(Path jdk, Path rules, String main, String... arguments) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of(
                "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-cp", ForkedJvm.applicationClassPath(), "dev.ratelimit.fixture." + main));
        command.addAll(List.of(arguments));
        return ForkedJvm.run(jdk, command, Duration.ofMinutes(1));
    }
}
