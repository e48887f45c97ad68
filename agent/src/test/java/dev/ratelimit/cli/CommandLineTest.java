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
}
