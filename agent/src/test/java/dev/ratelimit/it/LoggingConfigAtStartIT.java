package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The agent starts {@code java.util.logging} on a thread of its own while the rest of it is built,
 * and the application's logging configuration class runs there. When that class loads a class a
 * rule names, the start-up gate must not make that thread wait for the agent: the agent's start
 * thread waits for it. It once did, and the two waited on each other until the gate's 10 s bound,
 * then the gate's warning deadlocked on the LogManager's lock with the main thread, which waited
 * at the gate too: the JVM hung for good (review of the twenty-first round).
 */
class LoggingConfigAtStartIT {
    private static final Pattern RESULT = Pattern.compile("passed=(\\d+) ms=(\\d+)");

    @TempDir
    Path dir;

    static Stream<Path> jdks() {
        return Jdks.all();
    }

    /**
     * Runs {@code LoggingApp} under the agent with {@code configClass} (of the fixture's logging
     * package) as {@code java.util.logging.config.class} and a limit of 1 on every {@code handle}.
     */
    private ForkedJvm.Result runLoggingApp(Path jdk, String configClass) throws Exception {
        Path rules = Files.writeString(dir.resolve("rules.yaml"), "version: 1\nrules:\n  - name: handle\n"
                + "    match:\n      method: \"dev.ratelimit.fixture.logging.**#handle\"\n"
                + "    limit: 1\n    window: 1h\n");
        return ForkedJvm.run(jdk, List.of(
                "-Djava.util.logging.config.class=dev.ratelimit.fixture.logging." + configClass,
                "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-cp", ForkedJvm.applicationClassPath(),
                "dev.ratelimit.fixture.logging.LoggingApp"), Duration.ofSeconds(40));
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void aLoggingConfigClassThatLoadsALimitedClassStartsAtOnce(Path jdk) throws Exception {
        ForkedJvm.Result result = runLoggingApp(jdk, "SlowLoggingConfig");
        String output = result.stdout + result.stderr;
        assertEquals(0, result.exitCode, output);
        Matcher m = RESULT.matcher(result.stdout);
        assertTrue(m.find(), output);
        assertEquals("1", m.group(1), "the limit holds: " + output);
        assertTrue(Long.parseLong(m.group(2)) < 5_000, "main was not held for the gate's 10 s bound: " + output);
        assertTrue(!output.contains("was loaded before the agent was ready"), output);
    }

    /**
     * The logging configuration uses the main class itself, which main is loading (holding its
     * loading lock) and which waits at the gate: a cycle the gate cannot see. It costs the gate's
     * 10 s bound, then main runs, and the class is woven once the agent is ready. The gate's
     * warning once came from the waiting thread, through java.util.logging, whose lock the
     * configuring thread held: that hung the JVM for good (review of the twenty-first round).
     */
    @ParameterizedTest
    @MethodSource("jdks")
    void aLoggingConfigClassThatNeedsTheMainClassCostsTheBoundNotAHang(Path jdk) throws Exception {
        ForkedJvm.Result result = runLoggingApp(jdk, "MainNamingLoggingConfig");
        String output = result.stdout + result.stderr;
        assertEquals(0, result.exitCode, output);
        assertTrue(RESULT.matcher(result.stdout).find(), output);
        assertTrue(output.contains("logging configured for logging-app"), output);
    }
}
