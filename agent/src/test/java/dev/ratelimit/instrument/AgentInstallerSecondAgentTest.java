package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.bootstrap.RateLimitBridge;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A second {@code -javaagent} of this agent (one in JAVA_TOOL_OPTIONS, one on the command line)
 * was ignored with one INFO line that named nothing, hidden under log=warn: its rule file, valid
 * or not, was never read, and nothing on stderr said so.
 */
class AgentInstallerSecondAgentTest {

    @Test
    void aSecondJavaagentSaysOnStderrThatItsOptionsAreIgnored() {
        boolean claimedHere = RateLimitBridge.claimInstallation();
        String report = System.getProperty(AgentInstaller.ATTACH_REPORT_PROPERTY);
        PrintStream stderr = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            AgentInstaller.install("config=/etc/other-rules.yaml", null, false);
        } finally {
            System.setErr(stderr);
            if (report == null) {
                System.clearProperty(AgentInstaller.ATTACH_REPORT_PROPERTY);
            } else {
                System.setProperty(AgentInstaller.ATTACH_REPORT_PROPERTY, report);
            }
            if (claimedHere) {
                RateLimitBridge.releaseInstallation();
            }
        }
        String printed = err.toString(StandardCharsets.UTF_8);
        assertTrue(printed.contains("already loaded by an earlier -javaagent"), printed);
        assertTrue(printed.contains("config=/etc/other-rules.yaml"), printed);
    }
}
