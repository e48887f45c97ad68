package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.it.WebApp.Container;
import dev.ratelimit.testing.StallGuard;
import dev.ratelimit.testing.WindowGuard;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code java -jar rate-limit-agent.jar attach PID FILE} against the Spring Boot {@code test-app}
 * started without the agent: its endpoints become limited, attaching twice changes nothing, JMX
 * shows the counts, and attaching to something that is not a JVM fails with exit 1 and a reason.
 *
 * <p>On Java 21+ (JEP 451) the target prints, on its stderr, when the agent is loaded:
 *
 * <pre>
 * WARNING: A Java agent has been loaded dynamically (/path/to/rate-limit-agent.jar)
 * WARNING: If a serviceability tool is in use, please run with -XX:+EnableDynamicAgentLoading to hide this warning
 * WARNING: If a serviceability tool is not in use, please run with -Djdk.instrument.traceUsage for more information
 * WARNING: Dynamic loading of agents will be disallowed by default in a future release
 * </pre>
 *
 * and nothing when it was started with {@code -XX:+EnableDynamicAgentLoading}. Both are asserted.
 * The flag silences the warning only when it comes from the command line (or {@code JDK_JAVA_OPTIONS},
 * which the launcher adds to the command line): given in {@code JAVA_TOOL_OPTIONS} it is applied
 * but the JVM prints the warning anyway (HotSpot checks that the flag's origin is the command line).
 * The attach command always runs on the same JDK as the target.
 */
class AttachIT {
    /**
     * Each test starts well inside an hour, as its target counts under rules of 1h: two minutes,
     * since the attach itself (ForkedJvm.run) waits out an hour's last minute, and a target given
     * the attach late gives up on it (after 60 s) and makes its calls unlimited.
     */
    private static final long ATTACH_MARGIN_MILLIS = 120_000;
    private static final String TOKEN = "attach-internal-token-0123456789";
    private static final String RULE = "internal-per-ip";
    private static final String TURN = "/internal/turns/1";
    private static final String DYNAMIC_WARNING = "WARNING: A Java agent has been loaded dynamically";
    private static final Pattern ATTACHED = Pattern.compile(
            "(?m)^attached to process (\\d+) \\(Java (\\d+)\\) in (\\d+) ms: (.+)$");

    @TempDir
    Path dir;

    static Stream<Path> jdks() {
        return Jdks.all();
    }

    private Path rules() throws IOException {
        return Files.writeString(dir.resolve("rules.yaml"), "version: 1\n"
                + "exempt:\n"
                + "  header: X-Internal-Token\n"
                + "  tokens:\n"
                + "    - ${env:RATELIMIT_INTERNAL_TOKEN}\n"
                + "rules:\n"
                + "  - name: " + RULE + "\n"
                + "    match:\n"
                + "      http:\n"
                + "        path: /internal/**\n"
                + "    key: client-ip\n"
                + "    limit: 5\n"
                + "    window: 1h\n");
    }

    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void attachingLimitsARunningTestAppOnce(Path jdk) throws Exception {
        WindowGuard.awayFromBoundary(3_600_000, ATTACH_MARGIN_MILLIS);
        Path rules = rules();
        int jmxPort = freePort();
        Map<String, String> env = new HashMap<>();
        env.put("RATELIMIT_INTERNAL_TOKEN", TOKEN);
        // the JVM's own JMX connector, to read the MBeans the attached agent registers
        env.put("JAVA_TOOL_OPTIONS", "-Dcom.sun.management.jmxremote.port=" + jmxPort
                + " -Dcom.sun.management.jmxremote.authenticate=false -Dcom.sun.management.jmxremote.ssl=false"
                + " -Dcom.sun.management.jmxremote.host=127.0.0.1 -Djava.rmi.server.hostname=127.0.0.1");
        int feature = feature(jdk);
        try (WebApp app = WebApp.startWithoutAgent(Container.SPRING_BOOT, jdk, env)) {
            // without the agent nothing is limited: the app itself answers 401 to each
            assertEquals(List.of(401, 401, 401, 401, 401, 401, 401, 401), posts(app, "127.0.0.30", null, 8), app::output);
            assertFalse(app.stderr().contains(DYNAMIC_WARNING), app::output);

            long started = System.nanoTime();
            ForkedJvm.Result first = attach(jdk, app.pid(), rules);
            long wallMillis = (System.nanoTime() - started) / 1_000_000;
            assertEquals(0, first.exitCode, () -> first + "\n" + app.output());
            Matcher m = ATTACHED.matcher(first.stdout);
            assertTrue(m.find(), first::toString);
            assertEquals(String.valueOf(app.pid()), m.group(1));
            assertEquals(String.valueOf(feature), m.group(2));
            String report = m.group(4);
            assertTrue(report.contains("started (attached to a running JVM)"), report);
            assertTrue(report.contains("config " + rules.toAbsolutePath()), report);
            assertTrue(report.contains(RULE), report);
            assertTrue(report.matches(".*retransformed \\d+ loaded classes in \\d+ ms.*"), report);
            System.out.printf("AttachIT [%s] attach to test-app: %s ms inside loadAgent, %d ms for the whole command%n"
                    + "  %s%n", jdk.getFileName(), m.group(3), wallMillis, m.group(0));

            // now limited: 5 plain callers' requests reach the app (401), then the agent answers 429
            assertEquals(List.of(401, 401, 401, 401, 401, 429, 429), posts(app, "127.0.0.31", null, 7), app::output);
            // the internal token exempts
            assertEquals(List.of(200, 200, 200, 200, 200, 200, 200), posts(app, "127.0.0.33", TOKEN, 7), app::output);

            // attaching again changes nothing
            ForkedJvm.Result second = attach(jdk, app.pid(), rules);
            assertEquals(0, second.exitCode, () -> second + "\n" + app.output());
            assertTrue(second.stdout.contains("already installed in this JVM; nothing was changed (rule file "
                    + rules.toAbsolutePath() + ")"), second::toString);
            // naming another rule file changes nothing either, and says so with exit 1: the first
            // file stays in force (this one's limit of 500 is not)
            Path other = Files.writeString(rules.resolveSibling("other-rules.yaml"),
                    Files.readString(rules).replace("limit: 5\n", "limit: 500\n"));
            ForkedJvm.Result another = attach(jdk, app.pid(), other);
            assertEquals(1, another.exitCode, () -> another + "\n" + app.output());
            assertTrue(another.stderr.contains("not attached: the agent already runs in this JVM with the rule file "
                    + rules.toAbsolutePath() + " (edits to it are reloaded); restart the JVM to use "
                    + other.toAbsolutePath()), another::toString);
            // not counted twice: a fresh address again gets exactly 5 before the 429
            assertEquals(List.of(401, 401, 401, 401, 401, 429), posts(app, "127.0.0.32", null, 6), app::output);

            // JMX shows the counts
            JMXServiceURL url = new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + jmxPort + "/jmxrmi");
            try (JMXConnector connector = JMXConnectorFactory.connect(url)) {
                MBeanServerConnection server = connector.getMBeanServerConnection();
                ObjectName rule = new ObjectName("dev.ratelimit:type=Rule,name=" + RULE);
                assertEquals(10L, server.getAttribute(rule, "Allowed"));
                assertEquals(3L, server.getAttribute(rule, "Rejected"));
                assertEquals(7L, server.getAttribute(rule, "Exempted"));
                assertEquals(0L, server.getAttribute(rule, "ForgedTokens"));
                assertEquals(0L, server.getAttribute(rule, "StoreErrors"));
                assertEquals(2L, server.getAttribute(rule, "TrackedKeys"));
                ObjectName agent = new ObjectName("dev.ratelimit:type=Agent");
                assertEquals(rules.toAbsolutePath().toString(), server.getAttribute(agent, "ConfigPath"));
                assertEquals(0L, server.getAttribute(agent, "AgentErrors"));
                assertEquals(0L, server.getAttribute(agent, "TransformationErrors"));
                assertTrue((Long) server.getAttribute(agent, "InstrumentedClasses") >= 1);
            }

            String stderr = app.stderr();
            if (feature >= 21) {
                assertTrue(stderr.contains(DYNAMIC_WARNING), () -> "JEP 451 warning on Java " + feature + "\n" + app.output());
                assertTrue(stderr.contains("-XX:+EnableDynamicAgentLoading"), stderr);
                System.out.printf("AttachIT [%s] the target printed:%n%s%n", jdk.getFileName(), warningLines(stderr));
            } else {
                assertFalse(stderr.contains(DYNAMIC_WARNING), stderr);
            }
            assertFalse(app.output().contains(TOKEN), "tokens are never logged");
            assertFalse(app.output().contains("could not instrument"), app::output);
            assertFalse(app.output().contains("internal error"), app::output);
        }
    }

    /**
     * Java 21+ without the warning: the target was started with -XX:+EnableDynamicAgentLoading. The
     * target is the Jetty fixture (same /internal/turns endpoint), which starts faster than Spring Boot.
     */
    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void enableDynamicAgentLoadingSilencesTheWarning(Path jdk) throws Exception {
        int feature = feature(jdk);
        if (feature < 21) {
            System.out.printf("AttachIT [%s] Java %d prints no dynamic-agent warning; nothing to silence%n",
                    jdk.getFileName(), feature);
            return;
        }
        WindowGuard.awayFromBoundary(3_600_000, ATTACH_MARGIN_MILLIS);
        Path rules = rules();
        // JDK_JAVA_OPTIONS: the launcher puts it on the command line (JAVA_TOOL_OPTIONS would not silence it)
        Map<String, String> env = Map.of("RATELIMIT_INTERNAL_TOKEN", TOKEN,
                "JDK_JAVA_OPTIONS", "-XX:+EnableDynamicAgentLoading");
        try (WebApp app = WebApp.startWithoutAgent(Container.JETTY, jdk, env)) {
            ForkedJvm.Result result = attach(jdk, app.pid(), rules);
            assertEquals(0, result.exitCode, () -> result + "\n" + app.output());
            assertTrue(ATTACHED.matcher(result.stdout).find(), result::toString);
            assertEquals(List.of(401, 401, 401, 401, 401, 429), posts(app, "127.0.0.40", null, 6), app::output);
            assertFalse(app.stderr().contains(DYNAMIC_WARNING), app::output);
            assertTrue(app.stderr().contains("Picked up JDK_JAVA_OPTIONS: -XX:+EnableDynamicAgentLoading"), app::output);
        }
    }

    /**
     * An attach refused for an invalid rule file installs nothing, so the next attach, with the
     * file mended, installs the agent. It once found the first attach's claim on the JVM and
     * answered "already installed" with exit 0, the application running without limits.
     */
    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void anAttachRefusedForAnInvalidFileLeavesTheNextOneFree(Path jdk) throws Exception {
        WindowGuard.awayFromBoundary(3_600_000, ATTACH_MARGIN_MILLIS);
        Path bad = Files.writeString(dir.resolve("bad.yaml"), "version: 1\nrules:\n  - name: x\n    limit: five\n");
        Path rules = rules();
        Map<String, String> env = new HashMap<>();
        env.put("RATELIMIT_INTERNAL_TOKEN", TOKEN);
        if (feature(jdk) >= 21) {
            env.put("JDK_JAVA_OPTIONS", "-XX:+EnableDynamicAgentLoading");
        }
        try (WebApp app = WebApp.startWithoutAgent(Container.JETTY, jdk, env)) {
            // no file, and none where the target looks: the relative path in its report is the
            // target's, which the command says, with the target's working directory
            ForkedJvm.Result noFile = attach(jdk, app.pid(), null);
            assertEquals(1, noFile.exitCode, () -> noFile + "\n" + app.output());
            assertTrue(noFile.stderr.contains("ratelimit.yaml:1:1: the rule file does not exist"), noFile::toString);
            assertTrue(noFile.stderr.contains("ratelimit.yaml in its own working directory, /"), noFile::toString);

            ForkedJvm.Result refused = attach(jdk, app.pid(), bad);
            assertEquals(1, refused.exitCode, () -> refused + "\n" + app.output());
            assertTrue(refused.stderr.contains("not attached: the configuration is invalid"), refused::toString);
            assertTrue(refused.stderr.contains("bad.yaml:4:12"), refused::toString);
            assertEquals(List.of(401, 401, 401, 401, 401, 401), posts(app, "127.0.0.50", null, 6), app::output);

            ForkedJvm.Result attached = attach(jdk, app.pid(), rules);
            assertEquals(0, attached.exitCode, () -> attached + "\n" + app.output());
            Matcher m = ATTACHED.matcher(attached.stdout);
            assertTrue(m.find(), attached::toString);
            assertTrue(m.group(4).contains("started (attached to a running JVM)"), attached::toString);
            assertEquals(List.of(401, 401, 401, 401, 401, 429), posts(app, "127.0.0.51", null, 6), app::output);

            ForkedJvm.Result again = attach(jdk, app.pid(), rules);
            assertEquals(0, again.exitCode, () -> again + "\n" + app.output());
            assertTrue(again.stdout.contains("already installed in this JVM; nothing was changed"), again::toString);
        }
    }

    /**
     * An agent loaded with the JVM that failed to start (here: no security provider, so no
     * SHA-256) limits nothing; an attach then fails with exit 1 and says why. It once answered
     * "already installed; nothing was changed" with exit 0, as if the agent were limiting.
     */
    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void anAttachToAJvmWhoseAgentFailedToStartFailsAndSaysSo(Path jdk) throws Exception {
        Path noProviders = Files.writeString(dir.resolve("no-providers.security"), "security.overridePropertiesFile=true\n");
        Path rules = Files.writeString(dir.resolve("rules.yaml"),
                "version: 1\nrules:\n  - name: a\n    match:\n      method: dev.ratelimit.fixture.reload.ServiceA#call\n"
                        + "    key: arg0\n    limit: 2\n    window: 1h\n");
        Path err = dir.resolve("target.err");
        List<String> command = new ArrayList<>(List.of(jdk.resolve("bin/java").toString(),
                "-Djava.security.properties==" + noProviders,
                "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules));
        if (feature(jdk) >= 21) {
            command.add("-XX:+EnableDynamicAgentLoading");
        }
        command.addAll(List.of("-cp", ForkedJvm.applicationClassPath(), "dev.ratelimit.fixture.ReloadMain"));
        Process target = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(err.toFile()).start();
        try {
            long until = System.nanoTime() + 30_000_000_000L;
            while (!Files.readString(err).contains("could not start") && System.nanoTime() < until && target.isAlive()) {
                Thread.sleep(50);
            }
            assertTrue(Files.readString(err).contains("could not start"), () -> "the agent's start failed: " + read(err));
            ForkedJvm.Result attached = attach(jdk, target.pid(), rules);
            assertEquals(1, attached.exitCode, () -> attached + "\n" + read(err));
            assertTrue(attached.stderr.contains("the agent loaded with this JVM failed to start"), attached::toString);
            assertTrue(attached.stderr.contains("restart the JVM"), attached::toString);
            assertFalse(attached.stdout.contains("already installed"), attached::toString);
            assertTrue(target.isAlive(), () -> read(err));
        } finally {
            target.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return e.toString();
        }
    }

    /**
     * Attaching to a process that is not a JVM, or to no process, fails with exit 1 and says why,
     * quickly, and leaves the process alone (before Java 21 the attach API would send it SIGQUIT,
     * killing it, and wait 10 s).
     */
    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void attachingToSomethingThatIsNotAJvmFails(Path jdk) throws Exception {
        Path rules = rules();
        // long enough to outlive every attempt measured below: the attach must find it alive
        Process sleep = new ProcessBuilder("sleep", "120").start();
        try {
            // The bound is for the attach, which must fail at once rather than wait for the attach
            // API's 10 s; it includes the forked JVM's start, which a 2-core CI machine loaded by
            // other builds can stretch: an attach over it while the machine stopped this JVM too is
            // measured again (the process is left alone, so it can be), with the same bound; the
            // last attach's result and time are the ones asserted
            ForkedJvm.Result[] results = new ForkedJvm.Result[1];
            long millis = StallGuard.measure(5_000 - 1, 3, 100, () -> {
                // ForkedJvm.run waits out the last minute of an hour before it starts a JVM (up to
                // a minute, inside the time measured): that wait is taken here, before the clock starts
                WindowGuard.awayFromBoundary(3_600_000, 70_000);
                long started = System.nanoTime();
                results[0] = attach(jdk, sleep.pid(), rules);
                return (System.nanoTime() - started) / 1_000_000;
            });
            ForkedJvm.Result notJvm = results[0];
            System.out.printf("AttachIT [%s] attach to `sleep 120` (pid %d) failed in %d ms: %s%n", jdk.getFileName(),
                    sleep.pid(), millis, notJvm.stderr.trim());
            assertEquals(1, notJvm.exitCode, notJvm::toString);
            assertTrue(notJvm.stderr.contains("cannot attach to process " + sleep.pid()), notJvm::toString);
            assertTrue(notJvm.stderr.contains("not a Java virtual machine"), notJvm::toString);
            assertFalse(notJvm.stdout.contains("attached to process"), notJvm::toString);
            assertTrue(sleep.isAlive(), () -> "the process was left alone, but it ended with " + sleep.exitValue());
            assertTrue(millis < 5_000, "fails fast: " + millis + " ms");
        } finally {
            sleep.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }

        long missing = unusedPid();
        long started = System.nanoTime();
        ForkedJvm.Result none = attach(jdk, missing, rules);
        System.out.printf("AttachIT [%s] attach to nonexistent pid %d failed in %d ms: %s%n", jdk.getFileName(),
                missing, (System.nanoTime() - started) / 1_000_000, none.stderr.trim());
        assertEquals(1, none.exitCode, none::toString);
        assertTrue(none.stderr.contains("cannot attach to process " + missing), none::toString);
        assertFalse(none.stdout.contains("attached to process"), none::toString);
    }

    /**
     * An application that defined the API's exception before the attach (its class loader read it
     * from the API jar) catches the rejections of an annotated method: they are thrown as its
     * loader's copy. They were the agent's copy, on the boot class path, which its
     * {@code catch (RateLimitExceededException e)} did not name: every rejection escaped (review
     * of the twenty-fourth round).
     */
    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void anApplicationsCatchSeesTheRejectionsAfterAnAttach(Path jdk) throws Exception {
        WindowGuard.awayFromBoundary(3_600_000, ATTACH_MARGIN_MILLIS);
        Path rules = Files.writeString(dir.resolve("empty.yaml"), "version: 1\nrules: []\n");
        String printed = attachedWhenReady(jdk, "CatchesAfterAttachMain", rules);
        assertTrue(printed.contains("RESULT ownCopy=true"), "the case under test: " + printed);
        assertTrue(printed.contains("RESULT report=rate-limit-agent"), printed);
        assertTrue(printed.contains("RESULT passed=3\n"), printed);
        assertTrue(printed.contains("RESULT caught=3\n"), printed);
        assertTrue(printed.contains("RESULT escaped=0\n"), printed);
        assertTrue(printed.contains("RESULT rule=Greeter#greet\n"), printed);
        assertTrue(printed.contains("RESULT retryAfterPositive=true"), printed);
        // a class loaded before the attach: its annotated abstract method is named, as at start-up
        assertTrue(printed.contains("dev.ratelimit.fixture.Api#name()Ljava/lang/String; is annotated"
                + " dev.ratelimit.annotation.RateLimited, but it is an abstract method, which is never limited"), printed);
        // the watcher, started on the JVM's Attach Listener, runs at the normal priority, not its
        assertTrue(printed.contains("RESULT watcher=[rate-limit-agent-config-watcher:5]\n"), printed);
    }

    /**
     * Starts fixture {@code main} without the agent, attaches the agent with {@code rules} once
     * it prints {@code READY} (asserting the attach exits 0), and returns all it printed by its end.
     */
    private static String attachedWhenReady(Path jdk, String main, Path rules) throws Exception {
        Process target = new ProcessBuilder(jdk.resolve("bin/java").toString(), "-cp", ForkedJvm.applicationClassPath(),
                "dev.ratelimit.fixture." + main).redirectErrorStream(true).start();
        try {
            java.io.BufferedReader out = new java.io.BufferedReader(
                    new java.io.InputStreamReader(target.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
            StringBuilder output = new StringBuilder();
            for (String line = out.readLine(); line != null && !line.equals("READY"); line = out.readLine()) {
                output.append(line).append('\n');
            }
            ForkedJvm.Result attached = attach(jdk, target.pid(), rules);
            assertEquals(0, attached.exitCode, () -> attached + "\n" + output);
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                output.append(line).append('\n');
            }
            assertTrue(target.waitFor(60, TimeUnit.SECONDS), output::toString);
            return output.toString();
        } finally {
            target.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
    }

    /**
     * A loaded class the JVM will not retransform because it is in the error state (its static
     * initializer failed: {@code InternalError: class redefinition failed: invalid class}, an
     * {@code Error} that is no {@code LinkageError}) costs that class alone: the other classes of
     * the batch are retransformed one at a time, and the attach finishes. The error once ended the
     * attach half done: nothing loaded was limited, no MBean, no watcher, and every later attach
     * was refused (test-app-jetty's Spring adapter classes; the review of the thirty-fourth round).
     */
    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void aClassInTheErrorStateCostsOnlyItselfItsRetransform(Path jdk) throws Exception {
        WindowGuard.awayFromBoundary(3_600_000, ATTACH_MARGIN_MILLIS);
        Path rules = Files.writeString(dir.resolve("send.yaml"), "version: 1\nrules:\n  - name: send\n    match:\n"
                + "      method: dev.ratelimit.fixture.BrokenClassBesideAttachMain*#send\n    key: global\n"
                + "    limit: 3\n    window: 1h\n");
        String printed = attachedWhenReady(jdk, "BrokenClassBesideAttachMain", rules);
        assertTrue(printed.contains("RESULT brokenFailed=true"), "the case under test: " + printed);
        assertTrue(printed.contains("could not retransform dev.ratelimit.fixture.BrokenClassBesideAttachMain$Broken"),
                printed);
        assertTrue(printed.contains("RESULT passed=3\n"), printed);
        assertTrue(printed.contains("RESULT rejected=3\n"), printed);
    }

    /**
     * A class loader that fails when the attach's scan of loaded classes asks it for a class file
     * (an {@code AssertionError} of its own) costs that class its look, not the attach: the attach
     * reports a start, and the classes loaded after it are limited. The error once escaped after
     * the transformer was registered: the process printed that it ran without rate limits and
     * {@code attach} that the agent did not report, while the limit held.
     */
    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void aLoaderThatFailsTheScanDoesNotStopTheAttach(Path jdk) throws Exception {
        String[] seen = attachBesideAFailingLoader(jdk, "assertion");
        String printed = seen[0];
        assertTrue(seen[1].startsWith("0:"), () -> seen[1] + "\n" + printed);
        assertTrue(seen[1].contains("attached to process "), () -> seen[1]);
        assertFalse(printed.contains("could not start"), printed);
        assertTrue(printed.contains("RESULT passed=3\n"), printed);
        assertTrue(printed.contains("RESULT rejected=3\n"), printed);
        assertTrue(seen[2].startsWith("0:") && seen[2].contains("already installed"), () -> seen[2]);
    }

    /**
     * An error of the JVM's own during the attach's scan, after the transformer is registered (a
     * loader that overflows the stack), is reported as an attach that did not finish, with exit 1,
     * while the classes loaded after it are limited. It was reported as "could not start; the
     * application runs without rate limits", and {@code attach} said the agent did not report.
     */
    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void anAttachThatFailsAfterItsTransformerIsInForceSaysSo(Path jdk) throws Exception {
        String[] seen = attachBesideAFailingLoader(jdk, "overflow");
        String printed = seen[0];
        assertTrue(seen[1].startsWith("1:"), () -> seen[1] + "\n" + printed);
        assertTrue(seen[1].contains("attached, but did not finish starting: java.lang.StackOverflowError"),
                () -> seen[1]);
        assertFalse(printed.contains("could not start"), printed);
        assertFalse(printed.contains("without rate limits"), printed);
        assertTrue(printed.contains("RESULT passed=3\n"), printed);
        assertTrue(printed.contains("RESULT rejected=3\n"), printed);
        // a second attach does not answer "already installed" as if all were well
        assertTrue(seen[2].startsWith("1:") && seen[2].contains("an earlier attach is in force but did not finish"
                + " starting (java.lang.StackOverflowError)"), () -> seen[2]);
    }

    /**
     * Starts {@code LoaderFailsAtAttachMain MODE}, attaches with no rules, lets it call the limited
     * method, and attaches again; returns what the program printed, then for each attach its exit
     * code, a colon, and its output.
     */
    private String[] attachBesideAFailingLoader(Path jdk, String mode) throws Exception {
        WindowGuard.awayFromBoundary(3_600_000, ATTACH_MARGIN_MILLIS);
        Path rules = Files.writeString(dir.resolve("empty.yaml"), "version: 1\nrules: []\n");
        // to a file, not a pipe: the logged stack overflow outgrows a pipe's buffer, and the
        // target would wait for a reader while the attach waits for it
        Path output = dir.resolve("target-" + mode + ".out");
        Process target = new ProcessBuilder(jdk.resolve("bin/java").toString(), "-cp", ForkedJvm.applicationClassPath(),
                "dev.ratelimit.fixture.LoaderFailsAtAttachMain", mode).redirectErrorStream(true)
                .redirectOutput(output.toFile()).start();
        try {
            long until = System.nanoTime() + 30_000_000_000L;
            while (!read(output).contains("READY") && System.nanoTime() < until && target.isAlive()) {
                Thread.sleep(20);
            }
            assertTrue(read(output).contains("READY"), () -> read(output));
            ForkedJvm.Result attached = attach(jdk, target.pid(), rules);
            until = System.nanoTime() + 60_000_000_000L;
            while (!read(output).contains("RESULT rejected=") && System.nanoTime() < until && target.isAlive()) {
                Thread.sleep(20);
            }
            ForkedJvm.Result again = attach(jdk, target.pid(), rules);
            String printed = read(output);
            assertTrue(printed.contains("RESULT held=true"), "the case under test: " + printed);
            return new String[] {printed, attached.exitCode + ": " + attached.stdout + attached.stderr,
                    again.exitCode + ": " + again.stdout + again.stderr};
        } finally {
            target.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
    }

    /** {@code attach PID FILE}, or {@code attach PID} when {@code rules} is null. */
    private static ForkedJvm.Result attach(Path jdk, long pid, Path rules) throws Exception {
        List<String> command = new ArrayList<>(List.of("-jar", ForkedJvm.agentJar().toString(), "attach", String.valueOf(pid)));
        if (rules != null) {
            command.add(rules.toAbsolutePath().toString());
        }
        return ForkedJvm.run(jdk, command, Duration.ofSeconds(60));
    }

    private static List<Integer> posts(WebApp app, String source, String token, int n) {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            statuses.add((token == null ? app.postFrom(source, TURN, "progress")
                    : app.postFrom(source, TURN, "progress", "X-Internal-Token: " + token)).status);
        }
        return statuses;
    }

    private static String warningLines(String stderr) {
        StringBuilder lines = new StringBuilder();
        for (String line : stderr.split("\n")) {
            if (line.startsWith("WARNING: ") && (line.contains("agent") || line.contains("Agent"))) {
                lines.append("  ").append(line).append('\n');
            }
        }
        return lines.toString();
    }

    /** The feature version of a JDK home, from its {@code release} file. */
    private static int feature(Path jdk) throws IOException {
        for (String line : Files.readAllLines(jdk.resolve("release"))) {
            if (line.startsWith("JAVA_VERSION=")) {
                String version = line.substring("JAVA_VERSION=".length()).replace("\"", "");
                return Integer.parseInt(version.split("[.+-]")[0]);
            }
        }
        throw new IllegalStateException("no JAVA_VERSION in " + jdk.resolve("release"));
    }

    private static long unusedPid() {
        for (long pid = 32_000; pid > 1_000; pid--) {
            if (ProcessHandle.of(pid).isEmpty()) {
                return pid;
            }
        }
        throw new IllegalStateException("no unused process id");
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return socket.getLocalPort();
        }
    }
}
