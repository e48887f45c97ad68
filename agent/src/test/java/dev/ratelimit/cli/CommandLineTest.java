package dev.ratelimit.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The commands' arguments: each command refuses what it does not take, with its usage and exit 2. */
class CommandLineTest {

    private static int run(ByteArrayOutputStream out, ByteArrayOutputStream err, String... args) {
        return CommandLine.run(args, new File("rate-limit-agent.jar"), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    /** {@code version extra} printed the version and exited 0, where {@code check FILE extra} refuses (review). */
    @Test
    void versionTakesNoArgument() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(2, run(out, err, "version", "extra"));
        assertEquals("", out.toString(StandardCharsets.UTF_8));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("usage: java -jar rate-limit-agent.jar version"));

        ByteArrayOutputStream shown = new ByteArrayOutputStream();
        assertEquals(0, run(shown, new ByteArrayOutputStream(), "version"));
        assertTrue(shown.toString(StandardCharsets.UTF_8).startsWith("rate-limit-agent "));
        assertEquals(2, run(new ByteArrayOutputStream(), new ByteArrayOutputStream(), "check", "a.yaml", "extra"));
    }

    /**
     * attach without a file: the target's working directory is named only when the target found
     * no file there; it was named, with "give the file", for a file found and refused (review).
     */
    @Test
    void attachNamesTheTargetsDirectoryOnlyForAFileItDidNotFind() {
        String missing = "not attached: ratelimit.yaml:1:1: the rule file does not exist";
        String hint = AttachCommand.missingFileHint(missing, null, "42", "/srv/app");
        assertTrue(hint.contains("ratelimit.yaml in its own working directory, /srv/app"), hint);
        assertEquals(null, AttachCommand.missingFileHint("not attached: the configuration is invalid (1 error):"
                + " ratelimit.yaml:3:12: limit must be a whole number", null, "42", "/srv/app"));
        assertEquals(null, AttachCommand.missingFileHint(missing, "/etc/rules.yaml", "42", "/srv/app"));
    }

    /**
     * The agent trims each option's value, so {@code attach PID 'rules.yaml '} had the target read
     * rules.yaml, another file than the one named (which check refuses): refused before any attach,
     * as a path holding a comma is.
     */
    @Test
    void attachRefusesARuleFilePathThatTheOptionsWouldTrim() {
        for (String file : new String[] {"rules.yaml ", "rules.yaml\t"}) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            assertEquals(1, run(out, err, "attach", "1", file), file);
            assertEquals("", out.toString(StandardCharsets.UTF_8));
            assertTrue(err.toString(StandardCharsets.UTF_8).contains("begins or ends with white space"),
                    () -> err.toString(StandardCharsets.UTF_8));
        }
    }

    /** README: exit 2 when PID is not a process id; 0 and numbers past an int were "no such process", exit 1. */
    @Test
    void attachToSomethingThatIsNotAProcessIdIsAUsageError() {
        for (String pid : new String[] {"0", "00", "-1", "x", "2147483648", "99999999999", ""}) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            assertEquals(2, run(out, err, "attach", pid), pid);
            assertTrue(err.toString(StandardCharsets.UTF_8).contains("is not a process id"),
                    () -> err.toString(StandardCharsets.UTF_8));
        }
    }
}
