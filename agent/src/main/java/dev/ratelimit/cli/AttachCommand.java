package dev.ratelimit.cli;

import dev.ratelimit.instrument.AgentInstaller;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import net.bytebuddy.agent.ByteBuddyAgent;

/**
 * {@code attach PID [FILE]}: loads the agent into a running JVM through the attach API (located by
 * byte-buddy-agent). The agent retransforms the classes already loaded and leaves a one-line
 * report in a system property of the target, which this command prints.
 */
final class AttachCommand {
    private static final int MINIMUM_JAVA = 11;

    private AttachCommand() {
    }

    static int run(String pid, String file, File agentJar, PrintStream out, PrintStream err) {
        // process ids are positive and fit an int: 0 and 4294967296 are not ones, not processes
        // that happen not to exist
        long id = pid.matches("[0-9]{1,10}") ? Long.parseLong(pid) : 0;
        if (id < 1 || id > Integer.MAX_VALUE) {
            err.println("attach: '" + pid + "' is not a process id");
            return 2;
        }
        String options = "";
        if (file != null) {
            // the target resolves paths against its own working directory, and reads the rule
            // file with its own environment: it validates the file and reports what it found
            options = "config=" + Path.of(file).toAbsolutePath();
            if (options.indexOf(',') >= 0) {
                // the agent's options are split at commas: the target would read another file
                err.println("attach: the rule file's path " + Path.of(file).toAbsolutePath() + " holds a comma, which"
                        + " the agent options cannot carry; move the file, or start the target with RATELIMIT_CONFIG");
                return 1;
            }
            String path = Path.of(file).toAbsolutePath().toString();
            if (!path.equals(path.trim())) {
                // the agent trims each option's value (String.trim): the target would read another file
                err.println("attach: the rule file's path '" + path + "' begins or ends with white space, which the"
                        + " agent options cannot carry; rename the file, or start the target with RATELIMIT_CONFIG");
                return 1;
            }
        }
        Class<?> virtualMachine;
        try {
            virtualMachine = ByteBuddyAgent.AttachmentProvider.DEFAULT.attempt().getVirtualMachineType();
        } catch (RuntimeException e) {
            err.println("attach: this Java has no attach API (run the command with a JDK, not a JRE): " + e.getMessage());
            return 1;
        }
        String notJvm = notAJvm(pid);
        if (notJvm != null) {
            err.println("attach: cannot attach to process " + pid + ": " + notJvm);
            return 1;
        }
        Object vm;
        try {
            vm = virtualMachine.getMethod("attach", String.class).invoke(null, pid);
        } catch (InvocationTargetException e) {
            err.println("attach: cannot attach to process " + pid + ": " + e.getCause().getMessage()
                    + " (it must be a running JVM of the same user as this command, or run this as root)");
            return 1;
        } catch (ReflectiveOperationException e) {
            err.println("attach: the attach API is unusable: " + e);
            return 1;
        }
        try {
            Properties properties = (Properties) virtualMachine.getMethod("getSystemProperties").invoke(vm);
            String version = properties.getProperty("java.specification.version", "unknown");
            if (feature(version) < MINIMUM_JAVA) {
                err.println("attach: process " + pid + " runs Java " + version + "; the agent needs Java "
                        + MINIMUM_JAVA + " or later");
                return 1;
            }
            long started = System.nanoTime();
            virtualMachine.getMethod("loadAgent", String.class, String.class)
                    .invoke(vm, agentJar.getAbsolutePath(), options);
            long millis = (System.nanoTime() - started) / 1_000_000;
            String report = ((Properties) virtualMachine.getMethod("getSystemProperties").invoke(vm))
                    .getProperty(AgentInstaller.ATTACH_REPORT_PROPERTY);
            if (report == null) {
                // the agent reports how it ended on every path; no report means it failed before
                // it could, and the reason is in the process's own output
                err.println("attach: process " + pid + " (Java " + version + "): the agent did not report that it"
                        + " started; see the process's output for why");
                return 1;
            }
            if (report.startsWith("not attached")) {
                err.println("attach: process " + pid + " (Java " + version + "): " + report);
                String hint = missingFileHint(report, file, pid, properties.getProperty("user.dir", "(unknown)"));
                if (hint != null) {
                    err.println(hint);
                }
                return 1;
            }
            if (report.startsWith(AgentInstaller.ATTACHED_UNFINISHED)) {
                // in force, but not whole: a script must not take it for a clean attach
                err.println("attach: process " + pid + " (Java " + version + "): " + report);
                return 1;
            }
            if (report.startsWith("already installed")) {
                out.println("process " + pid + " (Java " + version + "): the agent is " + report);
                return 0;
            }
            out.println("attached to process " + pid + " (Java " + version + ") in " + millis + " ms: " + report);
            return 0;
        } catch (InvocationTargetException e) {
            err.println("attach: loading the agent into process " + pid + " failed: " + e.getCause());
            return 1;
        } catch (ReflectiveOperationException e) {
            err.println("attach: the attach API is unusable: " + e);
            return 1;
        } finally {
            try {
                virtualMachine.getMethod("detach").invoke(vm);
            } catch (ReflectiveOperationException ignored) {
                // the process may be gone; nothing to release
            }
        }
    }

    /**
     * What to add to a refusal when no file was given and the target found none where it looked:
     * a relative path in its report is the target's, not this command's. Null otherwise (a file
     * the target found and refused needs no word on where it looked).
     */
    static String missingFileHint(String report, String file, String pid, String targetDirectory) {
        if (file != null || !report.contains("the rule file does not exist")) {
            return null;
        }
        return "attach: no FILE was given, so the target read its RATELIMIT_CONFIG, or else ratelimit.yaml in its"
                + " own working directory, " + targetDirectory + "; give the file: attach " + pid + " FILE";
    }

    /**
     * Why {@code pid} is certainly not a JVM that can be attached to, or null when it may be one.
     * Before Java 21 the attach API starts the handshake by sending SIGQUIT to any process, which
     * kills a process that does not handle it (and then waits 10 s): on Linux, refuse a process
     * that does not catch SIGQUIT ({@code SigCgt} in {@code /proc/PID/status}) unless its attach
     * socket already exists, as Java 21+ does. Anything unreadable is left to the attach API.
     */
    private static String notAJvm(String pid) {
        Path status = Path.of("/proc", pid, "status");
        if (!Files.isDirectory(Path.of("/proc", "self"))) {
            return null; // not Linux: no cheap check
        }
        if (!Files.exists(status)) {
            return "no such process";
        }
        if (Files.exists(Path.of("/proc", pid, "root", "tmp", ".java_pid" + pid))
                || Files.exists(Path.of(System.getProperty("java.io.tmpdir"), ".java_pid" + pid))) {
            return null; // its attach listener is already running: no signal will be sent
        }
        try {
            for (String line : Files.readAllLines(status, StandardCharsets.ISO_8859_1)) {
                if (line.startsWith("SigCgt:")) {
                    long caught = Long.parseUnsignedLong(line.substring("SigCgt:".length()).trim(), 16);
                    return (caught & (1L << 2)) != 0 ? null // bit 2 is SIGQUIT (3)
                            : "it is not a Java virtual machine (it does not handle SIGQUIT, which starts the attach"
                                    + " handshake); nothing was sent to it";
                }
            }
        } catch (IOException | RuntimeException e) {
            // unreadable: let the attach API decide
        }
        return null;
    }

    /** 11 for "11", 8 for "1.8". */
    private static int feature(String specificationVersion) {
        String[] parts = specificationVersion.split("\\.");
        try {
            int first = Integer.parseInt(parts[0]);
            return first == 1 && parts.length > 1 ? Integer.parseInt(parts[1]) : first;
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
