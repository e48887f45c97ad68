package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.testing.RedisServer;
import dev.ratelimit.testing.WindowGuard;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rediss://}: the agent in a forked JVM reaches a redis-server that speaks only TLS, with a
 * certificate from a CA the JVM trusts. The rule rejects on store errors, so a limit of 3 out of
 * 5 calls can only come from Redis answering over TLS.
 */
class RedisTlsIT {
    @TempDir
    Path dir;

    private void run(String... command) throws Exception {
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new AssertionError(String.join(" ", command) + " failed:\n" + output);
        }
    }

    /** A CA the forked JVMs trust (trust.p12), and a server certificate it signed for {@code san}. */
    private void certificates(String san) throws Exception {
        if (!Files.exists(dir.resolve("ca.crt"))) {
            run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test-ca",
                    "-keyout", "ca.key", "-out", "ca.crt");
            Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
            run(keytool.toString(), "-importcert", "-noprompt", "-alias", "test-ca", "-file", "ca.crt",
                    "-keystore", "trust.p12", "-storetype", "PKCS12", "-storepass", "changeit");
        }
        run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + san.substring(san.indexOf(':') + 1),
                "-keyout", "server.key", "-out", "server.csr");
        Files.writeString(dir.resolve("san.ext"), "subjectAltName=" + san + "\n");
        run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-days", "2", "-extfile", "san.ext", "-out", "server.crt");
    }

    /**
     * Runs RedisTlsMain (five calls under a limit of 3, rejected on store errors) on each JDK;
     * {@code outage}: it waits for the agent's line saying Redis is not answering.
     */
    private List<ForkedJvm.Result> fiveCalls(RedisServer server, String keyPrefix, boolean outage) throws Exception {
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, String.join("\n",
                "version: 1",
                "store:",
                "  type: redis",
                "  on-error: reject",
                "  redis:",
                "    uri: " + server.uri(),
                "    timeout: 2s",
                "rules:",
                "  - name: tls-hit",
                "    match:",
                "      method: dev.ratelimit.fixture.SharedCounter#hit",
                "    key: arg0",
                "    limit: 3",
                "    window: 1h",
                ""));
        List<ForkedJvm.Result> results = new ArrayList<>();
        for (Path jdk : Jdks.all().toList()) {
            List<String> command = new ArrayList<>(List.of(
                    "-Djavax.net.ssl.trustStore=" + dir.resolve("trust.p12"),
                    "-Djavax.net.ssl.trustStorePassword=changeit",
                    "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                    "-cp", ForkedJvm.applicationClassPath(), "dev.ratelimit.fixture.RedisTlsMain",
                    keyPrefix + jdk.getFileName(), outage ? "outage" : "answering"));
            ForkedJvm.Result result = ForkedJvm.run(jdk, command, Duration.ofMinutes(1));
            assertEquals(0, result.exitCode, result::toString);
            results.add(result);
        }
        return results;
    }

    @Test
    void theAgentTalksToRedisOverTls() throws Exception {
        WindowGuard.awayFromBoundary(3_600_000, 60_000);
        certificates("IP:127.0.0.1");
        try (RedisServer server = RedisServer.startTls(dir.resolve("server.crt"), dir.resolve("server.key"),
                dir.resolve("ca.crt"))) {
            assertEquals("rediss", server.uri().substring(0, 6));
            for (ForkedJvm.Result result : fiveCalls(server, "key-", false)) {
                assertEquals("3", result.results().get("allowed"), result::toString);
                assertFalse(result.stderr.contains("is not answering"), result::toString);
                assertEquals("false", result.results().get("outageLogged"), result::toString);
            }
        }
    }

    /**
     * A certificate the JVM trusts, but for another host, is refused: the client once checked
     * only the chain, so any trusted certificate of any host would have been given the password.
     */
    @Test
    void aTrustedCertificateForAnotherHostIsRefused() throws Exception {
        certificates("IP:127.0.0.2");
        try (RedisServer server = RedisServer.startTls(dir.resolve("server.crt"), dir.resolve("server.key"),
                dir.resolve("ca.crt"))) {
            assertTrue(server.uri().startsWith("rediss://127.0.0.1:"), server.uri());
            for (ForkedJvm.Result result : fiveCalls(server, "wrong-host-", true)) {
                // on-error: reject, and Redis never answered over a connection the client accepted
                assertEquals("0", result.results().get("allowed"), result::toString);
                // the agent's line, seen by a handler of the program's: read from standard error,
                // it was lost now and then by a JVM exiting before the log writer wrote it
                assertEquals("true", result.results().get("outageLogged"), result::toString);
            }
        }
    }
}
