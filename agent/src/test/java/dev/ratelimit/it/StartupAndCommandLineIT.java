package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Start-up with a bad rule file, and the {@code check}/{@code version} commands of the jar. */
class StartupAndCommandLineIT {
    private static final String INVALID = String.join("\n",
            "version: 1",
            "rules:",
            "  - name: a",
            "    limt: 5",
            "    window: 1s",
            "  - name: b",
            "    limit: -3",
            "    window: 5 minutes",
            "");

    @TempDir
    Path dir;

    static Stream<Path> jdks() {
        return Jdks.all();
    }

    private Path file(String name, String text) throws Exception {
        Path file = dir.resolve(name);
        Files.writeString(file, text);
        return file;
    }

    private ForkedJvm.Result runFixture(Path jdk, String agentOptions) throws Exception {
        return ForkedJvm.run(jdk, List.of("-javaagent:" + ForkedJvm.agentJar() + "=" + agentOptions,
                "-cp", ForkedJvm.applicationClassPath(), "dev.ratelimit.fixture.FixtureMain", "plain"),
                Duration.ofMinutes(1));
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void anInvalidRuleFileStopsTheJvmWithExitCode78AndEveryError(Path jdk) throws Exception {
        Path rules = file("bad.yaml", INVALID);
        ForkedJvm.Result result = runFixture(jdk, "config=" + rules);
        assertEquals(78, result.exitCode, result::toString);
        assertTrue(result.stderr.contains(rules + ":4:5: unknown key 'limt' (did you mean 'limit'?)"), result::toString);
        assertTrue(result.stderr.contains(rules + ":7:12: "), result::toString);
        assertTrue(result.stderr.contains(rules + ":8:13: "), result::toString);
        assertFalse(result.stdout.contains("RESULT plain"), "the application must not have run");
        assertFalse(result.stderr.contains("\tat "), "no stack trace: " + result);
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void onConfigErrorDisableStartsWithoutTheFilesRules(Path jdk) throws Exception {
        Path rules = file("bad.yaml", INVALID);
        ForkedJvm.Result result = runFixture(jdk, "config=" + rules + ",on-config-error=disable");
        assertEquals(0, result.exitCode, result::toString);
        assertEquals("hello x", result.results().get("plain"), result::toString);
        assertTrue(result.stderr.contains("WITHOUT the rules"), result::toString);
    }

    /**
     * A trusted-proxies block covering every address starts (it is valid) with a warning that every
     * client can choose its key (review of the thirty-third round); check says so too
     * (CheckCommandTest).
     */
    @ParameterizedTest
    @MethodSource("jdks")
    void trustingEveryAddressStartsWithAWarning(Path jdk) throws Exception {
        Path rules = file("open.yaml", "version: 1\nclient:\n  trusted-proxies: [\"::/0\", 0.0.0.0/0]\nrules: []\n");
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of("-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-cp", ForkedJvm.applicationClassPath(), "dev.ratelimit.fixture.FixtureMain", "started"),
                Duration.ofMinutes(1));
        assertEquals(0, result.exitCode, result::toString);
        assertEquals("true", result.results().get("started"), result::toString);
        assertTrue(result.stderr.contains("WARNING: rate-limit-agent: client.trusted-proxies trusts every address"
                + " (::/0, 0.0.0.0/0): any client can choose its client-ip key"), result::toString);
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void aMissingRuleFileIsAConfigError(Path jdk) throws Exception {
        ForkedJvm.Result result = runFixture(jdk, "config=" + dir.resolve("missing.yaml"));
        assertEquals(78, result.exitCode, result::toString);
        assertTrue(result.stderr.contains("missing.yaml"), result::toString);
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void anUnknownAgentOptionIsAConfigError(Path jdk) throws Exception {
        Path rules = file("ok.yaml", "version: 1\nrules: []\n");
        ForkedJvm.Result result = runFixture(jdk, "config=" + rules + ",colour=blue");
        assertEquals(78, result.exitCode, result::toString);
        assertTrue(result.stderr.contains("unknown agent option 'colour'"), result::toString);
    }

    /**
     * A wrong option and a wrong rule file: both are printed at the one start, under exit and
     * disable alike (the file's errors were not read, so they came out only once the option was
     * mended; the claims audit).
     */
    @ParameterizedTest
    @MethodSource("jdks")
    void aWrongOptionAndAWrongFileAreBothPrinted(Path jdk) throws Exception {
        Path rules = file("bad.yaml", INVALID);
        for (String disable : List.of("", ",on-config-error=disable")) {
            ForkedJvm.Result result = runFixture(jdk, "config=" + rules + ",colour=blue" + disable);
            assertEquals(disable.isEmpty() ? 78 : 0, result.exitCode, result::toString);
            assertTrue(result.stderr.contains("unknown agent option 'colour'"), result::toString);
            assertTrue(result.stderr.contains(rules + ":4:5: unknown key 'limt' (did you mean 'limit'?)"), result::toString);
        }
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void checkPrintsTheRulesAndNeverATokenValue(Path jdk) throws Exception {
        Path token = file("token", "s3cr3t-t0ken-value-that-must-not-print\n");
        Path rules = file("ok.yaml", String.join("\n",
                "version: 1",
                "exempt:",
                "  header: X-Internal-Token",
                "  tokens:",
                "    - ${file:" + token + "}",
                "rules:",
                "  - name: api-per-ip",
                "    match:",
                "      http:",
                "        path: /api/**",
                "    key: client-ip",
                "    limit: 300",
                "    window: 1m",
                ""));
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of("-jar", ForkedJvm.agentJar().toString(), "check",
                rules.toString()), Duration.ofMinutes(1));
        assertEquals(0, result.exitCode, result::toString);
        assertTrue(result.stdout.contains("api-per-ip"), result::toString);
        assertTrue(result.stdout.contains("X-Internal-Token"), result::toString);
        assertFalse(result.stdout.contains("s3cr3t"), result::toString);
        assertFalse(result.stderr.contains("s3cr3t"), result::toString);
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void checkReportsEveryErrorWithItsPositionAndExits1(Path jdk) throws Exception {
        Path rules = file("bad.yaml", INVALID);
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of("-jar", ForkedJvm.agentJar().toString(), "check",
                rules.toString()), Duration.ofMinutes(1));
        assertEquals(1, result.exitCode, result::toString);
        List<String> lines = result.stderr.lines().filter(l -> l.startsWith(rules.toString())).toList();
        // limt is one mistake, reported once (not again as a missing limit): three lines
        assertEquals(3, lines.size(), result::toString);
        assertTrue(lines.get(0).endsWith("bad.yaml:4:5: unknown key 'limt' (did you mean 'limit'?)"), result::toString);
        assertTrue(lines.get(1).endsWith("bad.yaml:7:12: limit must be a whole number of at least 1, not -3"), result::toString);
        assertFalse(result.stderr.contains("\tat "), result::toString);
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void anUnshadedCopyOfTheAgentOnTheClassPathDoesNotStopTheAgent(Path jdk) throws Exception {
        Path unshaded;
        try (var files = Files.list(ForkedJvm.agentJar().getParent())) {
            unshaded = files.filter(f -> f.getFileName().toString().matches("rate-limit-agent-[0-9.]+(-SNAPSHOT)?\\.jar"))
                    .findFirst().orElseThrow();
        }
        Path rules = Path.of(StartupAndCommandLineIT.class.getResource("/fixture-rules.yaml").toURI());
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of("-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-cp", unshaded + java.io.File.pathSeparator + ForkedJvm.applicationClassPath(),
                "dev.ratelimit.fixture.FixtureMain", "annotations"), Duration.ofMinutes(1));
        assertEquals(0, result.exitCode, result::toString);
        assertEquals("3", result.results().get("greet.allowed"), result::toString);
        assertFalse(result.stderr.contains("could not start"), result::toString);
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void versionPrintsTheVersion(Path jdk) throws Exception {
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of("-jar", ForkedJvm.agentJar().toString(), "version"),
                Duration.ofMinutes(1));
        assertEquals(0, result.exitCode, result::toString);
        assertTrue(result.stdout.matches("rate-limit-agent \\d+\\.\\d+\\.\\d+.*\\R?"), result::toString);
    }
}
