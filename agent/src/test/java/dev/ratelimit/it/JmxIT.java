package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.it.WebApp.Container;
import dev.ratelimit.testing.WindowGuard;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.management.Attribute;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The agent's MBeans over a real remote JMX connection: the Jetty fixture under the agent with the
 * JVM's own JMX connector on a free port, known HTTP traffic, then every attribute of the rule
 * MBeans and of {@code dev.ratelimit:type=Agent} read through {@link JMXConnectorFactory} and
 * checked exactly; then a reload through a file edit, seen in the Agent MBean.
 */
class JmxIT {
    private static final String TOKEN = "jmx-internal-token-0123456789abc";
    private static final String DOMAINS = "domains-per-ip";
    private static final String INTERNAL = "internal-per-ip";
    private static final String ADDED = "messages-per-ip";
    private static final Set<String> RULE_ATTRIBUTES = Set.of(
            "Allowed", "Rejected", "Exempted", "ForgedTokens", "StoreErrors", "PassedCommitted", "TrackedKeys");
    private static final Set<String> AGENT_ATTRIBUTES = Set.of("Version", "ConfigPath", "LastReloadTime",
            "LastReloadOutcome", "AgentErrors", "TransformationErrors", "InstrumentedClasses", "Rules");

    @TempDir
    Path dir;

    static Stream<Path> jdks() {
        return Jdks.all();
    }

    /**
     * The agent does not build the platform MBean server of an application that never asks for
     * it; when the application does, the agent's MBeans are there as soon as it returns.
     */
    @ParameterizedTest
    @MethodSource("jdks")
    void theMBeansAreOnThePlatformServerTheMomentTheApplicationBuildsIt(Path jdk) throws Exception {
        ForkedJvm.Result result = runJmxFixture(jdk, List.of());
        Map<String, String> results = result.results();
        assertEquals("0", results.get("jmx.serversBefore"), () -> "the agent built an MBean server: " + result);
        assertEquals("0", results.get("jmx.ruleAllowed"), result::toString);
        assertEquals("0", results.get("transformationErrors"), result::toString);
    }

    /**
     * Another agent built the platform MBean server before this one started (so
     * {@code ManagementFactory} was loaded before it could be woven): the agent registers its MBeans
     * on that server itself, before it reports that it has started.
     */
    @ParameterizedTest
    @MethodSource("jdks")
    void theMBeansAreOnAServerAnotherAgentBuiltFirst(Path jdk) throws Exception {
        Path first = ForkedJvm.manifestOnlyAgent(dir.resolve("server-first.jar"),
                "dev.ratelimit.fixture.PlatformServerFirstAgent");
        ForkedJvm.Result result = runJmxFixture(jdk, List.of("-javaagent:" + first));
        assertEquals("1", result.results().get("jmx.serversBefore"), () -> "the other agent's server: " + result);
    }

    /**
     * Runs {@code FixtureMain jmx} under the agent (after {@code agentsBefore}) with one HTTP rule,
     * {@code api}, and checks what both tests above expect: the agent started, and its MBean and
     * the rule's were on the platform server the moment the program asked for it.
     */
    private ForkedJvm.Result runJmxFixture(Path jdk, List<String> agentsBefore) throws Exception {
        Path rules = Files.writeString(dir.resolve("rules.yaml"), "version: 1\nrules:\n  - name: api\n"
                + "    match:\n      http:\n        path: /api/**\n    key: client-ip\n    limit: 3\n    window: 1h\n");
        List<String> command = new ArrayList<>(agentsBefore);
        command.addAll(List.of("-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-cp", ForkedJvm.applicationClassPath(), "dev.ratelimit.fixture.FixtureMain", "jmx"));
        ForkedJvm.Result result = ForkedJvm.run(jdk, command, Duration.ofMinutes(1));
        Map<String, String> results = result.results();
        assertEquals(0, result.exitCode, result::toString);
        assertEquals("true", results.get("jmx.agentStarted"), result::toString);
        assertEquals("true", results.get("jmx.agentBean"), result::toString);
        assertEquals("true", results.get("jmx.ruleBean"), result::toString);
        assertEquals("0", results.get("agentErrors"), result::toString);
        return result;
    }

    private static String rules(boolean withAddedRule) {
        String yaml = "version: 1\n"
                + "exempt:\n"
                + "  header: X-Internal-Token\n"
                + "  tokens:\n"
                + "    - ${env:RATELIMIT_INTERNAL_TOKEN}\n"
                + "rules:\n"
                + "  - name: " + DOMAINS + "\n"
                + "    match:\n"
                + "      http:\n"
                + "        path: /api/domains/**\n"
                + "    key: client-ip\n"
                + "    limit: 3\n"
                + "    window: 1h\n"
                + "  - name: " + INTERNAL + "\n"
                + "    match:\n"
                + "      http:\n"
                + "        path: /internal/**\n"
                + "    key: client-ip\n"
                + "    limit: 5\n"
                + "    window: 1h\n";
        if (withAddedRule) {
            yaml += "  - name: " + ADDED + "\n"
                    + "    match:\n"
                    + "      http:\n"
                    + "        path: /api/messages\n"
                    + "    key: client-ip\n"
                    + "    limit: 5\n"
                    + "    window: 1h\n";
        }
        return yaml;
    }

    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void everyAttributeOverARealJmxConnection(Path jdk) throws Exception {
        WindowGuard.awayFromBoundary(3_600_000, 60_000);
        Path rules = Files.writeString(dir.resolve("rules.yaml"), rules(false));
        String version = agentVersion(jdk);
        int port = freePort();
        List<String> jvm = List.of(
                "-Dcom.sun.management.jmxremote.port=" + port,
                "-Dcom.sun.management.jmxremote.authenticate=false",
                "-Dcom.sun.management.jmxremote.ssl=false",
                "-Dcom.sun.management.jmxremote.host=127.0.0.1",
                "-Djava.rmi.server.hostname=127.0.0.1");
        try (WebApp app = WebApp.start(Container.JETTY, jdk, rules, Map.of("RATELIMIT_INTERNAL_TOKEN", TOKEN),
                List.of(), jvm)) {
            String target = "/api/domains/shop.example.com";
            // N = 3 allowed and M = 2 rejected from one plain address (limit 3)
            assertEquals(List.of(200, 200, 200, 429, 429), statuses(app, "127.0.0.21", target, null, 5), app::output);
            // K = 4 exempt with the real token: never counted
            assertEquals(List.of(200, 200, 200, 200), statuses(app, "127.0.0.22", target, TOKEN, 4), app::output);
            // F = 4 with a forged token: counted like plain requests (3 allowed, 1 rejected) and as forged
            assertEquals(List.of(200, 200, 200, 429),
                    statuses(app, "127.0.0.23", target, TOKEN.substring(1) + "x", 4), app::output);

            JMXServiceURL url = new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + port + "/jmxrmi");
            try (JMXConnector connector = JMXConnectorFactory.connect(url)) {
                MBeanServerConnection server = connector.getMBeanServerConnection();

                Set<ObjectName> ruleBeans = server.queryNames(new ObjectName("dev.ratelimit:type=Rule,*"), null);
                assertEquals(Set.of(ruleName(DOMAINS), ruleName(INTERNAL)), ruleBeans);

                Map<String, Object> domains = readAll(server, ruleName(DOMAINS), RULE_ATTRIBUTES);
                System.out.printf("JmxIT [%s] %s: %s%n", jdk.getFileName(), ruleName(DOMAINS), domains);
                assertEquals(6L, domains.get("Allowed"), domains::toString);
                assertEquals(3L, domains.get("Rejected"), domains::toString);
                assertEquals(4L, domains.get("Exempted"), domains::toString);
                assertEquals(4L, domains.get("ForgedTokens"), domains::toString);
                assertEquals(0L, domains.get("StoreErrors"), domains::toString);
                assertEquals(0L, domains.get("PassedCommitted"), domains::toString);
                // two addresses were counted; the exempt one never was
                assertEquals(2L, domains.get("TrackedKeys"), domains::toString);

                Map<String, Object> internal = readAll(server, ruleName(INTERNAL), RULE_ATTRIBUTES);
                for (String attribute : RULE_ATTRIBUTES) {
                    assertEquals(0L, internal.get(attribute), () -> "no traffic on /internal: " + internal);
                }

                ObjectName agentName = new ObjectName("dev.ratelimit:type=Agent");
                Map<String, Object> agent = readAll(server, agentName, AGENT_ATTRIBUTES);
                System.out.printf("JmxIT [%s] %s: %s%n", jdk.getFileName(), agentName, printable(agent));
                assertTrue(((String) agent.get("Version")).matches("\\d+\\.\\d+\\.\\d+(-[A-Za-z0-9.]+)?"),
                        () -> "version format: " + agent);
                assertEquals(version, agent.get("Version"), "the same version as `java -jar agent.jar version`");
                assertEquals(rules.toAbsolutePath().toString(), agent.get("ConfigPath"));
                assertEquals(0L, agent.get("AgentErrors"), app::output);
                assertEquals(0L, agent.get("TransformationErrors"), app::output);
                assertTrue((Long) agent.get("InstrumentedClasses") >= 1, () -> "servlet classes: " + agent);
                assertEquals(List.of(DOMAINS, INTERNAL), sorted((String[]) agent.get("Rules")));
                String startOutcome = (String) agent.get("LastReloadOutcome");
                String startTime = (String) agent.get("LastReloadTime");
                assertEquals("started with 2 rules", startOutcome);
                Instant started = Instant.parse(startTime);

                // a reload through a file edit: a rule added, the two others unchanged
                Thread.sleep(5); // the reload time must be able to differ from the start time
                long t0 = System.nanoTime();
                Files.writeString(rules, rules(true));
                String outcome = startOutcome;
                while (outcome.equals(startOutcome) && System.nanoTime() - t0 < Duration.ofSeconds(5).toNanos()) {
                    Thread.sleep(20);
                    outcome = (String) server.getAttribute(agentName, "LastReloadOutcome");
                }
                long millis = (System.nanoTime() - t0) / 1_000_000;
                System.out.printf("JmxIT [%s] reload seen over JMX after %d ms: %s%n", jdk.getFileName(), millis, outcome);
                Map<String, Object> reloaded = readAll(server, agentName, AGENT_ATTRIBUTES);
                assertEquals("loaded 3 rules", reloaded.get("LastReloadOutcome"), () -> printable(reloaded) + app.output());
                assertTrue(millis <= 2_000, "reloaded within 2 s: " + millis + " ms");
                String reloadTime = (String) reloaded.get("LastReloadTime");
                assertNotEquals(startTime, reloadTime);
                assertTrue(Instant.parse(reloadTime).isAfter(started), reloadTime + " after " + startTime);
                assertEquals(List.of(DOMAINS, INTERNAL, ADDED), sorted((String[]) reloaded.get("Rules")));
                assertEquals(rules.toAbsolutePath().toString(), reloaded.get("ConfigPath"));
                assertEquals(0L, reloaded.get("AgentErrors"));
                assertEquals(0L, reloaded.get("TransformationErrors"));

                assertEquals(Set.of(ruleName(DOMAINS), ruleName(INTERNAL), ruleName(ADDED)),
                        server.queryNames(new ObjectName("dev.ratelimit:type=Rule,*"), null));
                Map<String, Object> kept = readAll(server, ruleName(DOMAINS), RULE_ATTRIBUTES);
                assertEquals(domains, kept, "an unchanged rule keeps its counts across a reload");
                Map<String, Object> added = readAll(server, ruleName(ADDED), RULE_ATTRIBUTES);
                for (String attribute : RULE_ATTRIBUTES) {
                    assertEquals(0L, added.get(attribute), added::toString);
                }
            }
            String output = app.output();
            assertFalse(output.contains(TOKEN), "tokens are never logged");
            assertFalse(output.contains("internal error"), output);
        }
    }

    private static ObjectName ruleName(String rule) throws Exception {
        return new ObjectName("dev.ratelimit:type=Rule,name=" + rule);
    }

    /** Every attribute the MBean declares, read in one call; asserts they are exactly {@code expected}, all readable. */
    private static Map<String, Object> readAll(MBeanServerConnection server, ObjectName name, Set<String> expected)
            throws Exception {
        MBeanAttributeInfo[] infos = server.getMBeanInfo(name).getAttributes();
        Set<String> declared = new TreeSet<>();
        for (MBeanAttributeInfo info : infos) {
            declared.add(info.getName());
            assertTrue(info.isReadable(), info::toString);
            assertFalse(info.isWritable(), () -> "read-only: " + info);
        }
        assertEquals(new TreeSet<>(expected), declared, name.toString());
        Map<String, Object> values = new LinkedHashMap<>();
        for (Attribute attribute : server.getAttributes(name, declared.toArray(new String[0])).asList()) {
            values.put(attribute.getName(), attribute.getValue());
        }
        assertEquals(declared, values.keySet().stream().collect(Collectors.toCollection(TreeSet::new)),
                () -> "every attribute could be read: " + values);
        return values;
    }

    private static String printable(Map<String, Object> values) {
        return values.entrySet().stream()
                .map(e -> e.getKey() + "=" + (e.getValue() instanceof String[]
                        ? Arrays.toString((String[]) e.getValue()) : e.getValue()))
                .collect(Collectors.joining(", ", "{", "}"));
    }

    private static List<String> sorted(String[] names) {
        List<String> list = new ArrayList<>(Arrays.asList(names));
        List<String> order = List.of(DOMAINS, INTERNAL, ADDED);
        list.sort((x, y) -> Integer.compare(order.indexOf(x), order.indexOf(y)));
        return list;
    }

    private static List<Integer> statuses(WebApp app, String source, String target, String token, int n) {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            statuses.add((token == null ? app.getFrom(source, target)
                    : app.getFrom(source, target, "X-Internal-Token: " + token)).status);
        }
        return statuses;
    }

    private static String agentVersion(Path jdk) throws Exception {
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of("-jar", ForkedJvm.agentJar().toString(), "version"),
                Duration.ofSeconds(30));
        assertEquals(0, result.exitCode, result::toString);
        String line = result.stdout.trim();
        assertTrue(line.startsWith("rate-limit-agent "), result::toString);
        return line.substring("rate-limit-agent ".length());
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        }
    }
}
