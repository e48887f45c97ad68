package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

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

    @Test
    void theAgentTalksToRedisOverTls() throws Exception {
        WindowGuard.awayFromBoundary(3_600_000, 60_000);
        run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test-ca",
                "-keyout", "ca.key", "-out", "ca.crt");
        run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                "-keyout", "server.key", "-out", "server.csr");
        Files.writeString(dir.resolve("san.ext"), "subjectAltName=IP:127.0.0.1\n");
        run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-days", "2", "-extfile", "san.ext", "-out", "server.crt");
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        run(keytool.toString(), "-importcert", "-noprompt", "-alias", "test-ca", "-file", "ca.crt",
                "-keystore", "trust.p12", "-storetype", "PKCS12", "-storepass", "changeit");

        try (RedisServer server = RedisServer.startTls(dir.resolve("server.crt"), dir.resolve("server.key"),
                dir.resolve("ca.crt"))) {
            assertEquals("rediss", server.uri().substring(0, 6));
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
            for (Path jdk : Jdks.all().toList()) {
                List<String> command = new ArrayList<>(List.of(
                        "-Djavax.net.ssl.trustStore=" + dir.resolve("trust.p12"),
                        "-Djavax.net.ssl.trustStorePassword=changeit",
                        "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                        "-cp", ForkedJvm.applicationClassPath(), "dev.ratelimit.fixture.RedisTlsMain",
                        "key-" + jdk.getFileName()));
                ForkedJvm.Result result = ForkedJvm.run(jdk, command, Duration.ofMinutes(1));
                assertEquals(0, result.exitCode, result::toString);
                assertEquals("3", result.results().get("allowed"), jdk + "\n" + result);
                assertFalse(result.stderr.contains("is not answering"), result::toString);
            }
        }
    }
}
