package dev.ratelimit.it;

import dev.ratelimit.testing.WindowGuard;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Starts a JVM in its own process and collects what it printed. */
public final class ForkedJvm {
    private ForkedJvm() {
    }

    /** The agent jar built by this module's package phase. */
    public static Path agentJar() {
        Path jar = Path.of(System.getProperty("ratelimit.agent.jar", "target/rate-limit-agent.jar"));
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " does not exist; run mvn package first");
        }
        return jar.toAbsolutePath();
    }

    /**
     * The class path of the application under test: this module's test classes and the API jar,
     * never the unshaded runtime in target/classes.
     */
    public static String applicationClassPath() {
        List<String> entries = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (entry.endsWith("test-classes") || entry.contains("rate-limit-annotations")
                    || entry.replace('\\', '/').endsWith("annotations/target/classes")) {
                entries.add(entry);
            }
        }
        return String.join(File.pathSeparator, entries);
    }

    /** {@link #applicationClassPath()} with Kotlin's standard library, for the Kotlin fixture. */
    public static String applicationClassPathWithKotlin() {
        List<String> entries = new ArrayList<>(List.of(applicationClassPath()));
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (entry.replace('\\', '/').contains("/org/jetbrains/kotlin/kotlin-stdlib/")) {
                entries.add(entry);
            }
        }
        return String.join(File.pathSeparator, entries);
    }

    /**
     * Writes {@code jar}, an agent jar that is only a manifest naming {@code premainClass}: the
     * class itself comes from the application class path, as in {@code -javaagent:jar -cp classes}.
     */
    public static Path manifestOnlyAgent(Path jar, String premainClass) throws IOException {
        java.util.jar.Manifest manifest = new java.util.jar.Manifest();
        manifest.getMainAttributes().put(java.util.jar.Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().putValue("Premain-Class", premainClass);
        try (java.util.jar.JarOutputStream out = new java.util.jar.JarOutputStream(Files.newOutputStream(jar), manifest)) {
            out.flush();
        }
        return jar;
    }

    public static Result run(Path javaHome, List<String> command, Duration timeout) throws IOException, InterruptedException {
        // Many fixtures count calls under rules of 1h and assert exact counts; an hour is
        // aligned to the epoch, so a fixture whose calls straddled hh:00 would see a fresh
        // budget. None counts for a minute, so none is started in the last minute of an hour.
        WindowGuard.awayFromBoundary(3_600_000, 60_000);
        List<String> full = new ArrayList<>();
        full.add(javaHome.resolve("bin/java").toString());
        full.addAll(command);
        Path out = Files.createTempFile("forked-out", ".txt");
        Path err = Files.createTempFile("forked-err", ".txt");
        try {
            Process process = new ProcessBuilder(full)
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .start();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor();
                throw new AssertionError("forked JVM did not finish within " + timeout + ": " + full
                        + "\nstdout:\n" + Files.readString(out) + "\nstderr:\n" + Files.readString(err));
            }
            return new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    /** Exit status and output of a forked JVM. */
    public static final class Result {
        public final int exitCode;
        public final String stdout;
        public final String stderr;

        Result(int exitCode, String stdout, String stderr) {
            this.exitCode = exitCode;
            this.stdout = stdout;
            this.stderr = stderr;
        }

        /** The {@code RESULT name=value} lines a fixture printed. */
        public Map<String, String> results() {
            Map<String, String> results = new LinkedHashMap<>();
            for (String line : stdout.split("\n")) {
                if (line.startsWith("RESULT ")) {
                    int eq = line.indexOf('=');
                    results.put(line.substring(7, eq), line.substring(eq + 1).trim());
                }
            }
            return results;
        }

        @Override
        public String toString() {
            return "exit " + exitCode + "\nstdout:\n" + stdout + "\nstderr:\n" + stderr;
        }
    }
}
