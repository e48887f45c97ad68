package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A web application whose limited suspend function suspended and resumed, undeployed: its loader
 * is collected. A label field the agent's site kept held it (fixture {@code SuspendRedeployMain}).
 */
class SuspendRedeployIT {
    static java.util.stream.Stream<Path> jdks() {
        return Jdks.all();
    }

    private static Map<String, String> run(Path jdk, Path dir, String method) throws Exception {
        Path rules = Files.writeString(dir.resolve("rules.yaml"), "version: 1\nrules: []\n");
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of(
                "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-cp", ForkedJvm.applicationClassPathWithKotlin(),
                "dev.ratelimit.fixture.coroutines.SuspendRedeployMain", method), Duration.ofMinutes(2));
        Map<String, String> found = result.results();
        assertEquals("true", found.get("done"), result::toString);
        assertEquals("true", found.get("ownLoader"), result::toString);
        assertEquals("true", found.get("suspended"), result::toString);
        assertEquals("true", found.get("resumed"), result::toString);
        assertEquals("7", found.get("value"), result::toString);
        return found;
    }

    /** The same class, woven, its unlimited suspend function called. */
    @ParameterizedTest
    @MethodSource("jdks")
    void anUnlimitedSuspendFunctionLeavesTheLoaderCollectable(Path jdk, @TempDir Path dir) throws Exception {
        assertEquals("true", run(jdk, dir, "free").get("collected"));
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void aLimitedSuspendFunctionThatResumedLeavesTheLoaderCollectable(Path jdk, @TempDir Path dir) throws Exception {
        assertEquals("true", run(jdk, dir, "work").get("collected"), "the site kept the continuation class");
    }
}
