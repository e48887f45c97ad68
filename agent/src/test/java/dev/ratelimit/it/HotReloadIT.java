package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.it.WebApp.Container;
import dev.ratelimit.it.WebApp.Response;
import dev.ratelimit.testing.WindowGuard;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Hot reload in a forked JVM under {@code -javaagent}: the test edits the rule file under a
 * running {@code dev.ratelimit.fixture.ReloadMain} (valid and invalid in-place edits, a
 * write-to-temp-and-rename, a Kubernetes ConfigMap {@code ..data} symlink swap, deletion and
 * re-creation, a new rule for an already loaded class) and asserts, from what the fixture prints,
 * that the limits in force change (or do not) within 2 s. Token rotation through
 * {@code ${file:...}} is checked over HTTP on the Jetty fixture. Each latency is printed.
 */
class HotReloadIT {
    /** The contract: a valid edit takes effect within 2 s. */
    private static final Duration WITHIN = Duration.ofSeconds(2);
    private static final String A = "dev.ratelimit.fixture.reload.ServiceA#call";
    private static final String B = "dev.ratelimit.fixture.reload.ServiceB#call";
    private static final String C = "dev.ratelimit.fixture.reload.ServiceC#call";

    @TempDir
    Path dir;

    static Stream<Path> jdks() {
        return Jdks.all();
    }

    /** A rule file with rule-a (ServiceA#call, limit {@code limitA}), rule-c (limit 3), and rule-b when limitB > 0. */
    private static String rules(int limitA, int limitB, String extraRuleAKey) {
        StringBuilder yaml = new StringBuilder("version: 1\nrules:\n");
        yaml.append(rule("rule-a", A, limitA));
        if (extraRuleAKey != null) {
            yaml.append("    ").append(extraRuleAKey).append('\n');
        }
        yaml.append(rule("rule-c", C, 3));
        if (limitB > 0) {
            yaml.append(rule("rule-b", B, limitB));
        }
        return yaml.toString();
    }

    private static String rule(String name, String method, int limit) {
        return "  - name: " + name + "\n"
                + "    match:\n"
                + "      method: " + method + "\n"
                + "    key: arg0\n"
                + "    limit: " + limit + "\n"
                + "    window: 1h\n";
    }

    private static String label(Path jdk) {
        return jdk.getFileName().toString();
    }

    private static void report(Path jdk, String what, long millis) {
        System.out.printf("HotReloadIT [%s] %s: %d ms%n", label(jdk), what, millis);
    }

    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void editsUnderARunningJvmTakeEffectWithinTwoSeconds(Path jdk) throws Exception {
        WindowGuard.awayFromBoundary(3_600_000, 60_000);
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, rules(2, 0, null));
        try (Child child = Child.start(jdk, rules)) {
            child.await(0, "LIMIT a 2", Duration.ofSeconds(30));
            child.await(0, "LIMIT b 20", Duration.ofSeconds(5));

            // 7 (first half): rule-c counts a fixed key twice before an unrelated edit
            assertEquals("CALL c k1 allowed", child.call("c k1"));
            assertEquals("CALL c k1 allowed", child.call("c k1"));

            // 1. a valid in-place edit: rule-a's limit 2 -> 4
            long t0 = System.nanoTime();
            Files.writeString(rules, rules(4, 0, null));
            report(jdk, "in-place edit (limit 2 -> 4)", child.latency(t0, "LIMIT a 4"));
            child.assertSteady(t0, "a", 4);

            // 7 (second half): the edit did not touch rule-c, so its counter was kept: 3rd allowed, 4th rejected
            assertEquals("CALL c k1 allowed", child.call("c k1"), child::output);
            assertEquals("CALL c k1 rejected rule-c", child.call("c k1"), child::output);

            // 2. an invalid edit: reported once as FILE:LINE:COLUMN: message; the limit stays 4
            String invalid = rules(7, 0, "limt: 7");
            int line = 1 + (int) invalid.substring(0, invalid.indexOf("limt:")).chars().filter(ch -> ch == '\n').count();
            t0 = System.nanoTime();
            Files.writeString(rules, invalid);
            Pattern location = Pattern.compile("^" + Pattern.quote(rules.toString()) + ":(\\d+):(\\d+): (.+)$");
            Child.Line first = child.awaitErr(t0, text -> location.matcher(text).matches(), WITHIN);
            report(jdk, "invalid edit reported", (first.nanos - t0) / 1_000_000);
            sleepUntil(t0 + WITHIN.toNanos());
            List<String> reports = child.errLines(t0).stream().filter(text -> location.matcher(text).matches())
                    .collect(Collectors.toList());
            assertEquals(1, reports.size(), () -> "one report of the invalid edit in 2 s: " + reports + "\n" + child.output());
            Matcher m = location.matcher(reports.get(0));
            assertTrue(m.matches());
            assertEquals(String.valueOf(line), m.group(1), reports.get(0));
            assertEquals("5", m.group(2), reports.get(0));
            assertTrue(m.group(3).contains("unknown key 'limt'"), reports.get(0));
            List<String> limitsSince = child.limits(t0, "a");
            assertTrue(limitsSince.size() >= 10, () -> "the fixture kept running: " + limitsSince);
            assertTrue(limitsSince.stream().allMatch("4"::equals),
                    () -> "the previous rules stay in force after an invalid edit: " + limitsSince);

            // 3. write to a temporary file and rename it over the rule file: limit 3
            Path temp = dir.resolve(".rules.yaml.tmp");
            Files.writeString(temp, rules(3, 0, null));
            t0 = System.nanoTime();
            Files.move(temp, rules, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            report(jdk, "write-to-temp-and-rename (limit 3)", child.latency(t0, "LIMIT a 3"));
            child.assertSteady(t0, "a", 3);

            // 5. delete: the limit stays for a second; re-create with limit 6: it takes effect
            t0 = System.nanoTime();
            Files.delete(rules);
            sleepUntil(t0 + 1_000_000_000L);
            List<String> whileGone = child.limits(t0, "a");
            assertTrue(whileGone.size() >= 5 && whileGone.stream().allMatch("3"::equals),
                    () -> "the previous rules stay in force while the file is gone: " + whileGone);
            t0 = System.nanoTime();
            Files.writeString(rules, rules(6, 0, null));
            report(jdk, "re-created after deletion (limit 6)", child.latency(t0, "LIMIT a 6"));
            child.assertSteady(t0, "a", 6);

            // 6. a new rule naming ServiceB#call, loaded and called unlimited so far: retransformed
            List<String> bBefore = child.limits(0, "b");
            assertTrue(bBefore.stream().allMatch("20"::equals), () -> "b is unlimited before: " + bBefore);
            t0 = System.nanoTime();
            Files.writeString(rules, rules(6, 3, null));
            report(jdk, "new rule for a loaded class (b unlimited -> 3)", child.latency(t0, "LIMIT b 3"));
            child.assertSteady(t0, "b", 3);
            assertEquals("6", last(child.limits(t0, "a")), child::output);

            // 8. a new rule naming another method of a class woven already (ServiceA#other): the
            // class is retransformed. Its class was named already, so it once was not, and the
            // reload, logged as good, limited nothing
            List<String> a2Before = child.limits(0, "a2");
            assertTrue(a2Before.stream().allMatch("20"::equals), () -> "a2 is unlimited before: " + a2Before);
            t0 = System.nanoTime();
            Files.writeString(rules, rules(6, 3, null) + rule("rule-a2", "dev.ratelimit.fixture.reload.ServiceA#other", 2));
            report(jdk, "new rule for another method of a woven class (a2 unlimited -> 2)", child.latency(t0, "LIMIT a2 2"));
            child.assertSteady(t0, "a2", 2);
            assertEquals("6", last(child.limits(t0, "a")), child::output);

            String stderr = child.err();
            assertFalse(stderr.contains("could not instrument"), stderr);
            assertFalse(stderr.contains("could not retransform"), stderr);
            assertFalse(stderr.contains("internal error"), stderr);
            assertEquals(1, count(stderr, "is missing or unreadable"), "the deletion is logged once: " + stderr);
            assertTrue(child.isAlive(), child::output);
        }
    }

    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void kubernetesConfigMapSymlinkSwap(Path jdk) throws Exception {
        WindowGuard.awayFromBoundary(3_600_000, 60_000);
        // the layout of a ConfigMap volume: rules.yaml -> ..data/rules.yaml, ..data -> ..2026_v1
        Path v1 = Files.createDirectory(dir.resolve("..2026_v1"));
        Files.writeString(v1.resolve("rules.yaml"), rules(2, 0, null));
        Path data = Files.createSymbolicLink(dir.resolve("..data"), Path.of("..2026_v1"));
        Path rules = Files.createSymbolicLink(dir.resolve("rules.yaml"), Path.of("..data/rules.yaml"));
        try (Child child = Child.start(jdk, rules)) {
            child.await(0, "LIMIT a 2", Duration.ofSeconds(30));

            Path v2 = Files.createDirectory(dir.resolve("..2026_v2"));
            Files.writeString(v2.resolve("rules.yaml"), rules(5, 0, null));
            Path next = Files.createSymbolicLink(dir.resolve("..data_tmp"), Path.of("..2026_v2"));
            long t0 = System.nanoTime();
            Files.move(next, data, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            report(jdk, "ConfigMap ..data symlink swap (limit 5)", child.latency(t0, "LIMIT a 5"));
            assertTrue(Files.isSymbolicLink(rules) && Files.isSymbolicLink(data));
            // the kubelet then removes the old version; nothing changes
            Files.delete(v1.resolve("rules.yaml"));
            Files.delete(v1);
            child.assertSteady(t0, "a", 5);

            String stderr = child.err();
            assertFalse(stderr.contains("could not instrument"), stderr);
            assertFalse(stderr.contains("internal error"), stderr);
            assertFalse(stderr.contains("is missing or unreadable"), stderr);
        }
    }

    /**
     * An edit that makes {@code client.trusted-proxies} cover every address is loaded with the
     * warning the start gives ({@code check} and the start were tested; the reload's was not).
     */
    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void aReloadThatTrustsEveryAddressIsWarnedAbout(Path jdk) throws Exception {
        WindowGuard.awayFromBoundary(3_600_000, 60_000);
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, rules(2, 0, null));
        try (Child child = Child.start(jdk, rules)) {
            child.await(0, "LIMIT a 2", Duration.ofSeconds(30));
            assertFalse(child.err().contains("trusts every address"), child::output);

            long t0 = System.nanoTime();
            Files.writeString(rules, "version: 1\nclient:\n  trusted-proxies: [10.0.0.0/8, \"::/0\"]\n"
                    + rules(5, 0, null).substring("version: 1\n".length()));
            child.latency(t0, "LIMIT a 5");
            Child.Line warning = child.awaitErr(t0, text -> text.contains("trusts every address"), Duration.ofSeconds(10));
            assertTrue(warning.text.contains("WARNING: rate-limit-agent: client.trusted-proxies trusts every address"
                    + " (::/0): any client can choose its client-ip key"), child::output);
            assertEquals(1, count(child.err(), "trusts every address"), child::output);
        }
    }

    /**
     * A rule file refused at start-up because a token file it names is missing, with
     * {@code on-config-error=disable}: the agent runs without its rules, and creating the token
     * file loads them (a Secret mounted after the process started), as it does after a refused edit.
     */
    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void aFileRefusedAtStartUpForAMissingTokenFileIsLoadedWhenTheFileAppears(Path jdk) throws Exception {
        WindowGuard.awayFromBoundary(3_600_000, 60_000);
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, "version: 1\nexempt:\n  header: X-Internal-Token\n  tokens: [\"${file:token.txt}\"]\n"
                + rules(2, 0, null).substring("version: 1\n".length()));
        try (Child child = Child.start(jdk, rules, ",on-config-error=disable")) {
            child.await(0, "LIMIT a 20", Duration.ofSeconds(30));
            assertTrue(child.err().contains("WITHOUT the rules"), child::output);
            assertTrue(child.err().contains("token.txt"), child::output);

            long t0 = System.nanoTime();
            Files.writeString(dir.resolve("token.txt"), "an-internal-token-of-some-length-0123456789\n");
            report(jdk, "token file created after a refused start (a unlimited -> 2)", child.latency(t0, "LIMIT a 2"));
            child.assertSteady(t0, "a", 2);
            assertFalse(child.err().contains("an-internal-token-of-some-length"), "the token is never printed");
            assertFalse(child.err().contains("internal error"), child::output);
        }
    }

    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void tokenFilesAreReloadedSoTokensCanBeRotated(Path jdk) throws Exception {
        WindowGuard.awayFromBoundary(3_600_000, 60_000);
        String oldToken = "old-internal-token-0123456789abcd";
        String newToken = "new-internal-token-9876543210wxyz";
        Path token = Files.writeString(dir.resolve("token.txt"), oldToken + "\n");
        Path rules = Files.writeString(dir.resolve("rules.yaml"), "version: 1\n"
                + "exempt:\n"
                + "  header: X-Internal-Token\n"
                + "  tokens:\n"
                + "    - ${file:token.txt}\n"
                + "rules:\n"
                + "  - name: domains-per-ip\n"
                + "    match:\n"
                + "      http:\n"
                + "        path: /api/domains/**\n"
                + "    key: client-ip\n"
                + "    limit: 2\n"
                + "    window: 1h\n");
        String target = "/api/domains/shop.example.com";
        try (WebApp app = WebApp.start(Container.JETTY, jdk, rules, Map.of(), List.of())) {
            assertEquals(List.of(200, 200, 429), statuses(app, "127.0.0.11", target, null, 3), app::output);
            assertEquals(List.of(200, 200, 200, 200), statuses(app, "127.0.0.12", target, oldToken, 4), app::output);

            long t0 = System.nanoTime();
            Files.writeString(token, newToken + "\n");
            long latency = -1;
            for (int attempt = 1; System.nanoTime() - t0 < WITHIN.toNanos(); attempt++) {
                // a fresh address each time: 3 requests over a limit of 2 pass only if exempt
                if (statuses(app, "127.0.1." + attempt, target, newToken, 3).equals(List.of(200, 200, 200))) {
                    latency = (System.nanoTime() - t0) / 1_000_000;
                    break;
                }
                Thread.sleep(50);
            }
            assertTrue(latency >= 0, () -> "the rotated token was not exempt within 2 s\n" + app.output());
            report(jdk, "token file rotation", latency);
            // the old token now earns nothing: counted like any request, as a forged one
            assertEquals(List.of(200, 200, 429), statuses(app, "127.0.0.13", target, oldToken, 3), app::output);
            assertEquals(List.of(200, 200, 200), statuses(app, "127.0.0.14", target, newToken, 3), app::output);

            String output = app.output();
            assertFalse(output.contains("could not instrument"), output);
            assertFalse(output.contains("internal error"), output);
            assertFalse(output.contains(oldToken), "tokens are never logged: " + output);
            assertFalse(output.contains(newToken), "tokens are never logged: " + output);
        }
    }

    /**
     * A reload applied while 100 threads call a method under a rule it leaves unchanged: that
     * rule counts on across it, and exactly its limit passes, no call counted twice or not at
     * all, none failing (the concurrency audit found the race only at the unit level). Rule-c's
     * limit of 6,000 an hour is used up a second or more into a race of 100 threads each calling
     * every 20 ms for 3 s; an edit of rule-a, written as the race starts, is applied before the
     * last call allowed. Three rounds, each its own key.
     */
    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void aReloadDuringABurstLetsExactlyTheLimitOfAnUnchangedRuleThrough(Path jdk) throws Exception {
        WindowGuard.awayFromBoundary(3_600_000, 60_000);
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, "version: 1\nrules:\n" + rule("rule-a", A, 2) + rule("rule-c", C, 6000));
        try (Child child = Child.start(jdk, rules)) {
            child.await(0, "LIMIT a 2", Duration.ofSeconds(30));
            for (int round = 0; round < 3; round++) {
                int limitA = round % 2 == 0 ? 3 : 2;
                long t0 = System.nanoTime();
                child.send("race race-" + round + " 100 3000");
                Files.writeString(rules, "version: 1\nrules:\n" + rule("rule-a", A, limitA) + rule("rule-c", C, 6000));
                child.await(t0, "RACE race-" + round + " allowed 6000", Duration.ofSeconds(20));
                child.await(t0, "RACE race-" + round + " failed 0", Duration.ofSeconds(5));
                String prefix = "RACE race-" + round + " last allowed at ";
                Child.Line last = child.await(t0, text -> text.startsWith(prefix), Duration.ofSeconds(5));
                long lastAllowedMillis = Long.parseLong(last.text.substring(prefix.length(), last.text.length() - 3));
                // the edit was applied while calls were still allowed (measured from the command's
                // sending, which is before the race's start: the reload is if anything later)
                Child.Line reloaded = child.awaitErr(t0, text -> text.contains("rate-limit-agent: reloaded"),
                        Duration.ofSeconds(5));
                long reloadedMillis = (reloaded.nanos - t0) / 1_000_000;
                report(jdk, "reload during a burst (round " + round + ", last call allowed at " + lastAllowedMillis
                        + " ms)", reloadedMillis);
                assertTrue(reloadedMillis < lastAllowedMillis, () -> "reloaded after " + reloadedMillis
                        + " ms, the last call allowed at " + lastAllowedMillis + " ms\n" + child.output());
                child.assertSteady(reloaded.nanos, "a", limitA);
            }
            assertFalse(child.err().contains("internal error"), child::output);
        }
    }

    private static List<Integer> statuses(WebApp app, String source, String target, String token, int n) {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Response response = token == null ? app.getFrom(source, target)
                    : app.getFrom(source, target, "X-Internal-Token: " + token);
            statuses.add(response.status);
        }
        return statuses;
    }

    private static void sleepUntil(long nanos) throws InterruptedException {
        long left = nanos - System.nanoTime();
        if (left > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }

    private static String last(List<String> values) {
        return values.isEmpty() ? null : values.get(values.size() - 1);
    }

    private static int count(String text, String part) {
        int n = 0;
        for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
            n++;
        }
        return n;
    }

    /** A running {@code ReloadMain} under the agent, its output read line by line as it comes. */
    static final class Child implements AutoCloseable {
        /** One line of output and when the test read it. */
        static final class Line {
            final long nanos;
            final String text;

            Line(long nanos, String text) {
                this.nanos = nanos;
                this.text = text;
            }
        }

        private final Process process;
        private final List<String> command;
        private final List<Line> out = new ArrayList<>();
        private final List<Line> err = new ArrayList<>();
        private final OutputStream stdin;

        private Child(Process process, List<String> command) {
            this.process = process;
            this.command = command;
            this.stdin = process.getOutputStream();
            reader(process.getInputStream(), out, "stdout");
            reader(process.getErrorStream(), err, "stderr");
        }

        static Child start(Path jdk, Path rules) throws IOException {
            return start(jdk, rules, "");
        }

        /** @param moreOptions agent options after the config path, each preceded by a comma */
        static Child start(Path jdk, Path rules, String moreOptions) throws IOException {
            List<String> command = List.of(jdk.resolve("bin/java").toString(),
                    "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules + moreOptions,
                    "-cp", ForkedJvm.applicationClassPath(),
                    "dev.ratelimit.fixture.ReloadMain");
            ProcessBuilder builder = new ProcessBuilder(command);
            builder.environment().keySet().removeIf(name -> name.startsWith("RATELIMIT_"));
            return new Child(builder.start(), command);
        }

        private static void reader(InputStream stream, List<Line> lines, String name) {
            Thread thread = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                    for (String line = in.readLine(); line != null; line = in.readLine()) {
                        long now = System.nanoTime();
                        synchronized (lines) {
                            lines.add(new Line(now, line));
                        }
                    }
                } catch (IOException e) {
                    // the process ended
                }
            }, "reload-it-" + name);
            thread.setDaemon(true);
            thread.start();
        }

        boolean isAlive() {
            return process.isAlive();
        }

        /** The first stdout line equal to {@code text} read at or after {@code since}. */
        Line await(long since, String text, Duration timeout) throws InterruptedException {
            return await(out, since, text::equals, timeout);
        }

        Line await(long since, Predicate<String> match, Duration timeout) throws InterruptedException {
            return await(out, since, match, timeout);
        }

        Line awaitErr(long since, Predicate<String> match, Duration timeout) throws InterruptedException {
            return await(err, since, match, timeout);
        }

        private Line await(List<Line> lines, long since, Predicate<String> match, Duration timeout)
                throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            int from = 0;
            while (true) {
                synchronized (lines) {
                    for (; from < lines.size(); from++) {
                        Line line = lines.get(from);
                        if (line.nanos >= since && match.test(line.text)) {
                            return line;
                        }
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("no matching line within " + timeout + "\n" + output());
                }
                if (!process.isAlive()) {
                    Thread.sleep(200); // let the readers drain
                    throw new AssertionError("the fixture ended with " + process.exitValue() + "\n" + output());
                }
                Thread.sleep(10);
            }
        }

        /** Milliseconds from {@code since} to the first {@code text} line; asserts it is within 2 s. */
        long latency(long since, String text) throws InterruptedException {
            Line line = await(since, text, Duration.ofSeconds(10));
            long millis = (line.nanos - since) / 1_000_000;
            assertTrue(millis <= WITHIN.toMillis(), () -> "'" + text + "' took " + millis + " ms\n" + output());
            return millis;
        }

        /** After the new value appeared, the limit of {@code method} stays at it for a few more rounds. */
        void assertSteady(long since, String method, int limit) throws InterruptedException {
            Line seen = await(since, "LIMIT " + method + " " + limit, Duration.ofSeconds(10));
            Thread.sleep(300);
            List<String> after = limits(seen.nanos, method);
            assertTrue(after.size() >= 3 && after.stream().allMatch(String.valueOf(limit)::equals),
                    () -> "limit of " + method + " after it became " + limit + ": " + after + "\n" + output());
        }

        /** The limits of {@code method} printed at or after {@code since}. */
        List<String> limits(long since, String method) {
            String prefix = "LIMIT " + method + " ";
            synchronized (out) {
                return out.stream().filter(line -> line.nanos >= since && line.text.startsWith(prefix))
                        .map(line -> line.text.substring(prefix.length())).collect(Collectors.toList());
            }
        }

        List<String> errLines(long since) {
            synchronized (err) {
                return err.stream().filter(line -> line.nanos >= since).map(line -> line.text).collect(Collectors.toList());
            }
        }

        /** Sends a command to the fixture. */
        void send(String command) {
            try {
                stdin.write((command + "\n").getBytes(StandardCharsets.UTF_8));
                stdin.flush();
            } catch (IOException e) {
                throw new UncheckedIOException(output(), e);
            }
        }

        /** Sends a command (e.g. {@code c KEY}) and returns the fixture's answer line. */
        String call(String command) throws InterruptedException {
            long since = System.nanoTime();
            try {
                stdin.write((command + "\n").getBytes(StandardCharsets.UTF_8));
                stdin.flush();
            } catch (IOException e) {
                throw new UncheckedIOException(output(), e);
            }
            String key = command.substring(command.indexOf(' ') + 1);
            return await(out, since, text -> text.startsWith("CALL c " + key + " "), Duration.ofSeconds(10)).text;
        }

        String err() {
            return String.join("\n", errLines(0));
        }

        /** The command, stderr, and stdout without its many LIMIT lines (the last 40 kept). */
        String output() {
            List<String> stdout;
            synchronized (out) {
                stdout = out.stream().map(line -> line.text).collect(Collectors.toList());
            }
            List<String> tail = stdout.subList(Math.max(0, stdout.size() - 40), stdout.size());
            return command + "\nstderr:\n" + err() + "\nstdout (" + stdout.size() + " lines, last 40):\n"
                    + String.join("\n", tail);
        }

        @Override
        public void close() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
