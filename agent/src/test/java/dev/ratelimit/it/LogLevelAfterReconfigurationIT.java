package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code log=} option holds after the application configures java.util.logging again: that
 * resets every logger's level and removes every handler. {@code log=warn} fell back to INFO, and
 * under {@code log=debug} (a handler of the agent's own, its parents' cut off) the agent logged
 * nothing at all from then on (review of the twenty-fifth round).
 */
class LogLevelAfterReconfigurationIT {
    private static final String SHADOW_LINE = "rule 'shadowed' would reject";
    private static final String ENFORCED_LINE = "rule 'enforced' rejected calls";

    @TempDir
    Path dir;

    private ForkedJvm.Result run(String level, String... appArguments) throws Exception {
        Path rules = Files.writeString(dir.resolve("rules.yaml"), String.join("\n",
                "version: 1",
                "rules:",
                "  - name: shadowed",
                "    match: { method: \"dev.ratelimit.fixture.logging.ReconfiguringApp#shadowed\" }",
                "    mode: shadow",
                "    limit: 1",
                "    window: 1h",
                "  - name: enforced",
                "    match: { method: \"dev.ratelimit.fixture.logging.ReconfiguringApp#enforced\" }",
                "    limit: 1",
                "    window: 1h",
                ""));
        ForkedJvm.Result result = ForkedJvm.run(Path.of(System.getProperty("java.home")), List.of(
                "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules + ",log=" + level,
                "-cp", ForkedJvm.applicationClassPath(),
                "dev.ratelimit.fixture.logging.ReconfiguringApp", String.join(" ", appArguments)).stream()
                .filter(argument -> !argument.isEmpty()).collect(java.util.stream.Collectors.toList()),
                Duration.ofSeconds(60));
        assertEquals(0, result.exitCode, result::toString);
        assertTrue(result.stdout.contains("done"), result::toString);
        assertTrue(result.stderr.contains("reconfigured"), result::toString);
        return result;
    }

    private static String afterReconfiguration(ForkedJvm.Result result) {
        return result.stderr.substring(result.stderr.indexOf("reconfigured"));
    }

    @Test
    void logWarnStillHidesInfoLines() throws Exception {
        String after = afterReconfiguration(run("warn"));
        assertFalse(after.contains(SHADOW_LINE), after);
        assertFalse(after.contains(ENFORCED_LINE), after);
    }

    @Test
    void logDebugStillPrintsTheAgentsLines() throws Exception {
        String after = afterReconfiguration(run("debug"));
        assertTrue(after.contains(SHADOW_LINE), after);
        assertTrue(after.contains(ENFORCED_LINE), after);
    }

    /**
     * An application whose own logging configuration names the agent's logger keeps its choice:
     * the agent puts back its {@code log=} level only where the configuration says nothing of it.
     */
    @Test
    void aLevelTheApplicationsConfigurationGivesTheAgentsLoggerStands() throws Exception {
        String quiet = afterReconfiguration(run("info", "SEVERE"));
        assertFalse(quiet.contains(SHADOW_LINE), quiet);
        String loud = afterReconfiguration(run("warn", "FINE"));
        assertTrue(loud.contains(SHADOW_LINE), loud);
        assertTrue(loud.contains(ENFORCED_LINE), loud);
    }

    /**
     * Under {@code log=debug} the agent prints through a handler of its own, its parents' cut off.
     * A configuration that names the agent's logger removes that handler (as every one) and sets
     * the level; the agent's lines then go where the configuration sends them, the root's
     * handlers, and not nowhere.
     */
    @Test
    void aLevelTheApplicationsConfigurationGivesTheAgentsLoggerUnderLogDebugIsPrinted() throws Exception {
        String after = afterReconfiguration(run("debug", "FINE"));
        assertTrue(after.contains(SHADOW_LINE), after);
        assertTrue(after.contains(ENFORCED_LINE), after);
        assertEquals(after.indexOf(SHADOW_LINE), after.lastIndexOf(SHADOW_LINE), "printed once: " + after);
    }

    @Test
    void logInfoPrintsInfoButNotDebugLines() throws Exception {
        String after = afterReconfiguration(run("info"));
        assertTrue(after.contains(SHADOW_LINE), after);
        assertFalse(after.contains(ENFORCED_LINE), after);
    }
}
