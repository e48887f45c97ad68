package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Kotlin suspend functions in the shapes the compiler gives them (fixture
 * {@code coroutines/SuspendShapesMain.kt}), alone and under a coverage agent woven before this
 * one (JaCoCo puts its own code at the start of every method, before the state machine's test
 * the agent looks for): each counted once per call, a call of the function for another key
 * counted as its own.
 */
class SuspendShapesIT {
    private static final String FIXTURE = "dev.ratelimit.fixture.coroutines.";
    private static final String RULES = String.join("\n",
            "version: 1",
            "rules:",
            "  - name: greets",
            "    match:",
            "      method: " + FIXTURE + "Greeter$DefaultImpls#greet",
            "    limit: 3",
            "    window: 1h",
            "  - name: shouts",
            "    match:",
            "      method: " + FIXTURE + "SuspendShapesMainKt#shout",
            "    limit: 3",
            "    window: 1h",
            "  - name: visits",
            "    match:",
            "      method: " + FIXTURE + "Shop#visit",
            "    key: arg0",
            "    limit: 1",
            "    window: 1h",
            "  - name: posts",
            "    match:",
            "      method: " + FIXTURE + "Shop#post",
            "    key: arg0",
            "    limit: 2",
            "    window: 1h",
            "");

    static java.util.stream.Stream<Path> jdks() {
        return Jdks.all();
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void eachShapeIsCountedOncePerCall(Path jdk, @TempDir Path dir) throws Exception {
        check(run(jdk, dir, List.of()));
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void soUnderACoverageAgentWovenFirst(Path jdk, @TempDir Path dir) throws Exception {
        String jacoco = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(entry -> entry.replace('\\', '/').contains("/org/jacoco/org.jacoco.agent/"))
                .findFirst().orElseThrow(() -> new AssertionError("the JaCoCo agent is a test dependency"));
        ForkedJvm.Result result = run(jdk, dir, List.of("-javaagent:" + jacoco + "=destfile=" + dir.resolve("jacoco.exec")
                + ",includes=" + FIXTURE + "*"));
        check(result);
        assertTrue(Files.size(dir.resolve("jacoco.exec")) > 0, "JaCoCo wove the fixture: " + result);
    }

    private static ForkedJvm.Result run(Path jdk, Path dir, List<String> before) throws Exception {
        Path rules = Files.writeString(dir.resolve("rules.yaml"), RULES);
        List<String> command = new ArrayList<>(before);
        command.addAll(List.of("-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-cp", ForkedJvm.applicationClassPathWithKotlin(), FIXTURE + "SuspendShapesMainKt"));
        return ForkedJvm.run(jdk, command, Duration.ofMinutes(2));
    }

    private static void check(ForkedJvm.Result result) {
        Map<String, String> found = result.results();
        assertEquals("true", found.get("done"), result::toString);
        assertAll(result.toString(),
                () -> assertEquals("3 started=3", found.get("open.passed"), "an open class ($suspendImpl)"),
                () -> assertEquals("3", found.get("greet.passed"), "an interface's body (DefaultImpls)"),
                () -> assertEquals("3", found.get("object.passed"), "an object"),
                () -> assertEquals("3", found.get("companion.passed"), "a companion"),
                () -> assertEquals("3", found.get("jvmstatic.passed"), "@JvmStatic"),
                () -> assertEquals("3", found.get("extension.passed"), "an extension, by a YAML pattern"),
                () -> assertEquals("3", found.get("valueclass.passed"), "a value-class parameter"),
                () -> assertEquals("3", found.get("generic.passed"), "a generic function"),
                () -> assertEquals("ok", found.get("visit.b1"), "b's one call"),
                () -> assertEquals("refused", found.get("visit.b2"), "b again"),
                // a call for a that calls the function for b: b's call is its own, and refused
                () -> assertEquals("refused", found.get("visit.aThenB"), "a call of its own for another key"),
                () -> assertEquals("2", found.get("post.passed"), "an overload called inside the call"));
    }
}
