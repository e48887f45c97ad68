package dev.ratelimit.adversarial;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.it.ForkedJvm;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faults inside the agent's reach, each in a forked JVM under the built agent jar
 * (fixture: {@link dev.ratelimit.adversarial.fixture.FaultsFixture}): a key whose {@code toString}
 * throws, a key argument of a million characters, a store that cannot answer. The application's
 * call must pass (fail-open), be counted, and be logged once, never per call.
 */
class AgentFaultsIT {
    @TempDir
    Path dir;

    private ForkedJvm.Result run(Path rules, String... scenarios) throws Exception {
        List<String> command = new ArrayList<>(List.of("-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-cp", ForkedJvm.applicationClassPath(), "dev.ratelimit.adversarial.fixture.FaultsFixture"));
        command.addAll(List.of(scenarios));
        ForkedJvm.Result result = ForkedJvm.run(Path.of(System.getProperty("java.home")), command, Duration.ofSeconds(90));
        assertEquals(0, result.exitCode, result::toString);
        assertEquals("true", result.results().get("done"), result::toString);
        return result;
    }

    private static int count(String text, String fragment) {
        int n = 0;
        for (int at = text.indexOf(fragment); at >= 0; at = text.indexOf(fragment, at + 1)) {
            n++;
        }
        return n;
    }

    @Test
    void aKeyWhoseToStringThrowsFailsOpenIsCountedAndLoggedOnce() throws Exception {
        Path rules = Files.writeString(dir.resolve("rules.yaml"), "version: 1\nrules: []\n");
        ForkedJvm.Result result = run(rules, "toString");
        Map<String, String> r = result.results();
        System.out.println("toString throws: " + r);
        assertEquals("35", r.get("toString.sum"), "all 5 calls ran (a limit of 1 would have let only 1 through)\n" + result);
        assertEquals("5", r.get("toString.agentErrors"), result::toString);
        assertEquals(1, count(result.stderr, "internal error while limiting a method call"), result::toString);
        assertEquals(1, count(result.stderr, "UnsupportedOperationException"), "the cause appears once\n" + result);
    }

    /**
     * A key naming a property the argument's class does not have ({@code arg0.userId} on a
     * {@code HashMap}): a mismatch between the rule and the code, not an error of the agent's.
     * Every call passes and is counted, and one warning names the rule and the reason, without a
     * stack trace; it was logged at SEVERE as an internal error, with the agent's frames
     * (method-rule review, thirty-second round).
     */
    @Test
    void aKeyNamingAPropertyTheArgumentLacksIsOneWarningNamingTheRule() throws Exception {
        Path rules = Files.writeString(dir.resolve("rules.yaml"), "version: 1\nrules: []\n");
        ForkedJvm.Result result = run(rules, "missingProperty");
        Map<String, String> r = result.results();
        assertEquals("15", r.get("missingProperty.sum"), "all 5 calls ran (the limit is 1)\n" + result);
        assertEquals("5", r.get("missingProperty.agentErrors"), result::toString);
        assertEquals(1, count(result.stderr, "WARNING: rate-limit-agent: rule 'Service#mapped' could not read its key:"
                + " no property 'userId' (getter, accessor or field) on java.util.HashMap; the call was let through"
                + " that rule (logged once, counted in agent errors)"), result::toString);
        assertFalse(result.stderr.contains("internal error"), result::toString);
        assertFalse(result.stderr.contains("\tat "), "no stack trace\n" + result);
    }

    /**
     * Two rules whose keys cannot be read, for different reasons: each is logged, once, by its
     * name. Everything the application's code throws for a key is reported as one exception class,
     * so the line of the first rule stood for both, and the second rule, which limited nothing,
     * was never named in the log (review of the twenty-fifth round).
     */
    @Test
    void eachRuleWhoseKeyCannotBeReadIsLoggedOnceByName() throws Exception {
        Path rules = Files.writeString(dir.resolve("rules.yaml"), "version: 1\nrules: []\n");
        ForkedJvm.Result result = run(rules, "twoRules");
        Map<String, String> r = result.results();
        assertEquals("90", r.get("twoRules.sum"), "every call ran\n" + result);
        assertEquals("10", r.get("twoRules.agentErrors"), result::toString);
        assertEquals(2, count(result.stderr, "internal error while limiting a method call"), result::toString);
        assertEquals(1, count(result.stderr, "under rule 'Service#evil'"), result::toString);
        assertEquals(1, count(result.stderr, "under rule 'Service#evilAccount'"), result::toString);
        assertEquals(1, count(result.stderr, "reading property 'id' of"), result::toString);
        assertFalse(result.stderr.contains("no id"), "the application's message stays out\n" + result);
    }

    @Test
    void aKeyOfAMillionCharactersIsStillLimitedByItsHash() throws Exception {
        Path rules = Files.writeString(dir.resolve("rules.yaml"), "version: 1\nrules: []\n");
        ForkedJvm.Result result = run(rules, "huge");
        Map<String, String> r = result.results();
        System.out.println("million-character key: " + r);
        assertEquals("2", r.get("huge.a.allowed"), result::toString);
        assertEquals("2", r.get("huge.b.allowed"), "a key differing in its last character is another key\n" + result);
        assertEquals("0", r.get("huge.a.again.allowed"), "an equal copy is the same key\n" + result);
        assertEquals("0", r.get("huge.agentErrors"), result::toString);
        assertEquals("2", r.get("huge.trackedKeys"), result::toString);
        assertFalse(result.stderr.contains("internal error"), result::toString);
    }

    @Test
    void aStoreThatCannotAnswerFailsOpenIsCountedAndLoggedOnce() throws Exception {
        int deadPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            deadPort = socket.getLocalPort(); // closed again: nothing listens there
        }
        Path rules = Files.writeString(dir.resolve("rules.yaml"), String.join("\n",
                "version: 1",
                "store:",
                "  type: redis",
                "  on-error: allow",
                "  redis:",
                "    uri: redis://127.0.0.1:" + deadPort + "/0",
                "    timeout: 50ms",
                "rules:",
                "  - name: dead-store",
                "    match:",
                "      method: dev.ratelimit.adversarial.fixture.FaultsFixture$Service#stored",
                "    key: arg0",
                "    limit: 1",
                "    window: 1h",
                ""));
        ForkedJvm.Result result = run(rules, "store");
        Map<String, String> r = result.results();
        System.out.println("store refuses connections: " + r);
        assertEquals("50", r.get("store.allowed"), "on-error allow: every call passes\n" + result);
        assertEquals("50", r.get("store.storeErrors"), result::toString);
        assertEquals("0", r.get("store.agentErrors"), "a store outage is not an agent bug\n" + result);
        assertTrue(Long.parseLong(r.get("store.worstMillis")) < 1000, "bounded latency\n" + result);
        assertEquals(1, count(result.stderr, "is not answering"), "the outage is logged once\n" + result);
        assertFalse(result.stderr.contains("\tat "), result::toString);
    }
}
