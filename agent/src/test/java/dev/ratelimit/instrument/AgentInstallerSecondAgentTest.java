package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.bootstrap.RateLimitBridge;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A second installation in a JVM the agent already runs in. A second {@code -javaagent} of this agent (one in JAVA_TOOL_OPTIONS, one on the command line)
 * was ignored with one INFO line that named nothing, hidden under log=warn: its rule file, valid
 * or not, was never read, and nothing on stderr said so.
 */
class AgentInstallerSecondAgentTest {

    @Test
    void aSecondJavaagentSaysOnStderrThatItsOptionsAreIgnored() {
        PrintStream stderr = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            installBeside(null, "config=/etc/other-rules.yaml", false);
        } finally {
            System.setErr(stderr);
        }
        String printed = err.toString(StandardCharsets.UTF_8);
        assertTrue(printed.contains("already loaded by an earlier -javaagent"), printed);
        assertTrue(printed.contains("config=/etc/other-rules.yaml"), printed);
    }

    /**
     * An attach naming another rule file than the one in force answered "already installed;
     * nothing was changed" with exit 0, and a script took the new file for in force.
     */
    @Test
    void anAttachNamingAnotherRuleFileIsRefusedAndNamesTheFileInForce() {
        assertEquals("not attached: the agent already runs in this JVM with the rule file /etc/app/rules.yaml"
                + " (edits to it are reloaded); restart the JVM to use /etc/app/other.yaml",
                attachReport("/etc/app/rules.yaml", "config=/etc/app/other.yaml"));
        assertEquals("already installed in this JVM; nothing was changed (rule file /etc/app/rules.yaml)",
                attachReport("/etc/app/rules.yaml", "config=/etc/app/./rules.yaml,log=debug"));
        // an attach that names no file asks for no particular one
        assertEquals("already installed in this JVM; nothing was changed (rule file /etc/app/rules.yaml)",
                attachReport("/etc/app/rules.yaml", ""));
        // nor do options without one (the review: refused, "restart the JVM to use ./ratelimit.yaml")
        assertEquals("already installed in this JVM; nothing was changed (rule file /etc/app/rules.yaml)",
                attachReport("/etc/app/rules.yaml", "log=debug"));
    }

    @Test
    void aLinkToTheFileInForceIsTheSameFile(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("rules.yaml"), "version: 1\n");
        Path link = Files.createSymbolicLink(dir.resolve("link.yaml"), file);
        assertTrue(AgentInstaller.sameFile(file.toString(), link.toString()));
        assertFalse(AgentInstaller.sameFile(file.toString(), dir.resolve("missing.yaml").toString()));
        assertNull(AgentInstaller.askedConfig(" "));
        assertEquals(file.toString(), AgentInstaller.askedConfig("config=" + file));
    }

    /** What an attach with {@code options} reports to a JVM whose agent runs with {@code running}. */
    private static String attachReport(String running, String options) {
        return installBeside(running, options, true);
    }

    /**
     * Installs the agent with {@code options} beside an installation holding the claim (this
     * one's, for the call, should none hold it) that runs with the rule file {@code running}, or
     * one not yet known (null), and returns the attach report it leaves; the claim, the report
     * property and the file in force are as they were afterwards.
     */
    private static String installBeside(String running, String options, boolean attached) {
        boolean claimedHere = RateLimitBridge.claimInstallation();
        String before = RateLimitBridge.installedConfig();
        String report = System.getProperty(AgentInstaller.ATTACH_REPORT_PROPERTY);
        RateLimitBridge.installedConfig(running);
        try {
            AgentInstaller.install(options, null, attached);
            return System.getProperty(AgentInstaller.ATTACH_REPORT_PROPERTY);
        } finally {
            RateLimitBridge.installedConfig(before);
            if (report == null) {
                System.clearProperty(AgentInstaller.ATTACH_REPORT_PROPERTY);
            } else {
                System.setProperty(AgentInstaller.ATTACH_REPORT_PROPERTY, report);
            }
            if (claimedHere) {
                RateLimitBridge.releaseInstallation();
            }
        }
    }
}
