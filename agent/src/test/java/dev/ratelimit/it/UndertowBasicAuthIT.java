package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.testing.WindowGuard;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Undertow's own BASIC authentication (FlexBase64, every Authorization line) and a rule keyed
 * {@code header:Authorization}: once alice's credential is at its limit, a spelling of it that
 * Undertow still authenticates as alice must not be a fresh budget. See
 * {@code UndertowBasicCredentialKeysTest}. The port is {@code -Dratelimit.it.port} (default 0:
 * an ephemeral one).
 */
class UndertowBasicAuthIT {
    private static final Pattern PORT_LINE = Pattern.compile("(?m)^PORT=(\\d+)\\s*$");
    private static final String ALICE = "Basic YWxpY2U6cHc=";

    static Stream<Path> jdks() {
        return Jdks.all();
    }

    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void respellingAliceDoesNotGiveAFreshBudget(Path jdk) throws Exception {
        Path rules = Files.createTempFile("basic-rules", ".yaml");
        Files.writeString(rules, String.join("\n",
                "version: 1",
                "rules:",
                "  - name: per-credential",
                "    match: {http: {path: /secure/**}}",
                "    key: header:Authorization",
                "    limit: 3",
                "    window: 1h",
                ""));
        Path out = Files.createTempFile("basic-out", ".txt");
        WindowGuard.awayFromBoundary(3_600_000, 60_000); // the rule's hour must not turn under the test
        List<String> command = new ArrayList<>();
        command.add(jdk.resolve("bin/java").toString());
        command.add("-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules.toAbsolutePath());
        command.add("-cp");
        command.add(WebApp.classPath(WebApp.Container.UNDERTOW));
        command.add("dev.ratelimit.fixture.undertow.UndertowBasicAuthApp");
        command.add(System.getProperty("ratelimit.it.port", "0"));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        try {
            int port = awaitPort(process, out);
            for (int i = 0; i < 3; i++) {
                assertEquals(200, status(port, "Authorization: " + ALICE));
            }
            assertEquals(429, status(port, "Authorization: " + ALICE));
            // each of these authenticates as alice on Undertow; each was a fresh budget (200)
            String[][] spellings = {
                    {"Authorization: Basic YWxpY2U6cHc=x"},
                    {"Authorization: Basic YWxpY2U6cHc=whatever"},
                    {"Authorization: Basic YWxp Y2U6cHc="},
                    {"Authorization: Basic YWxpY2U6cHc=="},
            };
            List<String> passed = new ArrayList<>();
            for (String[] spelling : spellings) {
                int status = status(port, spelling);
                assertTrue(status == 200 || status == 429, String.join(" + ", spelling) + ": " + status);
                if (status == 200) {
                    passed.add(String.join(" + ", spelling));
                }
            }
            assertEquals(List.of(), passed, "spellings of alice:pw that Undertow authenticated with a fresh budget");
            // Undertow authenticates with the first Basic line, whatever line comes before it: a
            // varied line in front of alice's was a fresh budget per request (all 6 passed). All
            // requests with several lines now share one key, apart from alice's: a limit's worth pass
            int severalPassed = 0;
            for (int i = 0; i < 6; i++) {
                int status = status(port, "Authorization: Bearer r" + i, "Authorization: " + ALICE);
                assertTrue(status == 200 || status == 429, "two lines: " + status);
                severalPassed += status == 200 ? 1 : 0;
            }
            assertEquals(3, severalPassed, severalPassed + " of 6 requests with a varied first line passed");
            // carol:pwd is 9 bytes, 12 digits: FlexBase64 drops a 13th digit (java.util.Base64
            // refuses it), and the agent kept such a token as sent, spaces and all: a fresh key each
            String carol = "Authorization: Basic Y2Fyb2w6cHdk";
            for (int i = 0; i < 3; i++) {
                assertEquals(200, status(port, carol));
            }
            assertEquals(429, status(port, carol));
            List<String> carolPassed = new ArrayList<>();
            for (String spelling : new String[] {carol + "X", carol + "Q", "Authorization: Basic Y2Fy b2w6cHdkX",
                    "Authorization: Basic Y2Fyb2w6 cHdkX"}) {
                int status = status(port, spelling);
                assertTrue(status == 200 || status == 429, spelling + ": " + status);
                if (status == 200) {
                    carolPassed.add(spelling);
                }
            }
            assertEquals(List.of(), carolPassed, "spellings of carol:pwd that Undertow authenticated with a fresh budget");
        } finally {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }

    private static int awaitPort(Process process, Path out) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            Matcher m = PORT_LINE.matcher(Files.readString(out));
            if (m.find()) {
                return Integer.parseInt(m.group(1));
            }
            if (!process.isAlive()) {
                throw new AssertionError("exited: " + Files.readString(out));
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no port: " + Files.readString(out));
    }

    /** A raw HTTP/1.1 GET of /bctx/secure/me with these header lines, exactly as written. */
    private static int status(int port, String... headerLines) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(30_000);
            StringBuilder request = new StringBuilder("GET /bctx/secure/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\n");
            for (String line : headerLines) {
                request.append(line).append("\r\n");
            }
            request.append("\r\n");
            OutputStream os = socket.getOutputStream();
            os.write(request.toString().getBytes(StandardCharsets.ISO_8859_1));
            os.flush();
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream response = new ByteArrayOutputStream();
            in.transferTo(response);
            String statusLine = response.toString(StandardCharsets.ISO_8859_1).split("\r\n", 2)[0];
            return Integer.parseInt(statusLine.split(" ")[1]);
        }
    }
}
