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
 * "A method that calls itself" counts once, as the README says, also when it calls itself in a
 * lambda of its own, through a method reference to itself, or through the bridge of a generic
 * interface it implements (a composite calling {@code child.handle(node)} on a {@code Handler<Node>}):
 * a walk of four nodes under an inline limit of 3 is one call. Through a lambda or a method reference each node was once a call of its
 * own, so every walk was refused (0 of 5).
 */
class SelfCallThroughLambdaIT {
    static java.util.stream.Stream<Path> jdks() {
        return Jdks.all();
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void aWalkThroughItsOwnLambdaIsOneCall(Path jdk, @TempDir Path dir) throws Exception {
        Path rules = Files.writeString(dir.resolve("rules.yaml"), "version: 1\nrules: []\n");
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of(
                "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-cp", ForkedJvm.applicationClassPath(),
                "dev.ratelimit.fixture.LambdaRecursionMain"), Duration.ofMinutes(2));
        Map<String, String> found = result.results();
        assertEquals("true", found.get("done"), result::toString);
        assertEquals("3", found.get("direct.allowed"), result::toString);
        assertEquals("3", found.get("lambda.allowed"), result::toString);
        assertEquals("3", found.get("reference.allowed"), result::toString);
        assertEquals("3", found.get("bridge.allowed"), result::toString);
    }
}
