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
 * A key read that calls a limited method (a rule keyed {@code arg0.id} on a method taking an
 * {@code Order}, and a rule naming {@code Order#getId}) is the agent's call. It used to be
 * counted: the agent's reads spent the getter's budget (the application's own first call of
 * {@code getId} was refused), and once spent, the getter's rejection inside the key read made the
 * keyed rule let every call through as an agent error: a limit of 1 let 4 of 5 calls through.
 */
class KeyReentryIT {
    private static final String RULES = String.join("\n",
            "version: 1",
            "rules:",
            "  - name: process-per-order",
            "    match:",
            "      method: dev.ratelimit.fixture.KeyReentryMain$OrderService#process",
            "    key: arg0.id",
            "    limit: 1",
            "    window: 1h",
            "  - name: order-reads",
            "    match:",
            "      method: dev.ratelimit.fixture.KeyReentryMain$Order#getId",
            "    key: global",
            "    limit: 2",
            "    window: 1h",
            "");

    static java.util.stream.Stream<Path> jdks() {
        return Jdks.all();
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void aKeyReadIsNotAnApplicationCall(Path jdk, @TempDir Path dir) throws Exception {
        Path rules = Files.writeString(dir.resolve("rules.yaml"), RULES);
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of(
                "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-cp", ForkedJvm.applicationClassPath(),
                "dev.ratelimit.fixture.KeyReentryMain"), Duration.ofMinutes(2));
        Map<String, String> found = result.results();
        assertEquals("true", found.get("done"), result::toString);
        assertEquals("1", found.get("process.allowed"), result::toString);
        assertEquals("1", found.get("process.bodies"), result::toString);
        assertEquals("2", found.get("getId.allowed"), result::toString);
        assertEquals("0", found.get("agentErrors"), result::toString);
    }
}
