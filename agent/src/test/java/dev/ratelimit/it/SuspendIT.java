package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Kotlin {@code suspend} functions (the fixture {@code SuspendMain.kt}, compiled by the Kotlin
 * compiler): a call is counted once however often it suspends. The function's state machine is
 * called again at each resumption, with its own continuation; each of those calls was counted, so
 * a limit of 3 let 1 call through that suspends twice, and with the key's budget spent between a
 * call's start and its resumption, the call was refused half done.
 */
class SuspendIT {
    private static final String RULES = String.join("\n",
            "version: 1",
            "rules:",
            "  - name: orders",
            "    match:",
            "      method: dev.ratelimit.fixture.SuspendShop#order",
            "    key: arg0",
            "    limit: 5",
            "    window: 1h",
            "");

    static java.util.stream.Stream<Path> jdks() {
        return Jdks.all();
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void aSuspendFunctionIsCountedOncePerCall(Path jdk, @TempDir Path dir) throws Exception {
        Path rules = Files.writeString(dir.resolve("rules.yaml"), RULES);
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of(
                "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-cp", ForkedJvm.applicationClassPathWithKotlin(),
                "dev.ratelimit.fixture.SuspendMainKt"), Duration.ofMinutes(2));
        Map<String, String> found = result.results();
        assertEquals("true", found.get("done"), result::toString);
        // @RateLimited(limit = 3): suspends twice per call
        assertEquals("3", found.get("work.passed"), result::toString);
        // a refused call is refused before its body starts, never at a resumption
        assertEquals("3", found.get("work.started"), result::toString);
        assertEquals("3", found.get("work.finished"), result::toString);
        // a call that calls itself across suspensions is one call
        assertEquals("3", found.get("walk.passed"), result::toString);
        // a suspend function that never suspends has no state machine: counted as any method
        assertEquals("3", found.get("plain.passed"), result::toString);
        // 20 calls at once on one key, each suspending and resumed on another thread, 50 rounds:
        // exactly 5 pass, and 5 start
        assertEquals("[]", found.get("order.wrongRounds"), result::toString);
        assertEquals("0", found.get("agentErrors"), result::toString);
        assertNull(found.get("unexpected"), result::toString);
    }
}
