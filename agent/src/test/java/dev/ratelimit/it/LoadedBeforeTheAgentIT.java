package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A class loaded before the agent is ready (here by another agent's premain) is retransformed when
 * it is, from the class file the JVM rebuilds, which keeps only annotations of runtime retention.
 * An application's own {@code RateLimited} of class retention (Java's default; the fixture's
 * {@code own.RateLimited}) is read from the loader's class file instead: {@code Greeter#own}
 * (own annotation, class retention, limit 2) is limited like {@code Greeter#greet} (ours, runtime
 * retention). It once ran unlimited, after an attach too (review of the twenty-first round).
 */
class LoadedBeforeTheAgentIT {
    @TempDir
    Path dir;

    static Stream<Path> jdks() {
        return Jdks.all();
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void anOwnAnnotationOfClassRetentionSurvivesTheRetransformation(Path jdk) throws Exception {
        Path first = ForkedJvm.manifestOnlyAgent(dir.resolve("loads-greeter-first.jar"),
                "dev.ratelimit.fixture.LoadsGreeterFirstAgent");
        Path rules = Files.writeString(dir.resolve("rules.yaml"), "version: 1\nrules: []\n");
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of(
                "-javaagent:" + first,
                "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-cp", ForkedJvm.applicationClassPath(),
                "dev.ratelimit.fixture.GreeterLimitedLaterMain"), Duration.ofSeconds(60));
        String output = result.stdout + result.stderr;
        assertEquals(0, result.exitCode, output);
        assertTrue(result.stdout.matches("(?s).*greet refused-after=\\d+ then-passed=0.*"), "the control: " + output);
        assertTrue(result.stdout.matches("(?s).*own refused-after=\\d+ then-passed=0.*"), output);
    }
}
