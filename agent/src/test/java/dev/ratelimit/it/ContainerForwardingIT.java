package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.ratelimit.it.WebApp.Container;
import dev.ratelimit.it.WebApp.Response;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Spring Boot with {@code server.forward-headers-strategy=native} (as on Kubernetes, where Boot
 * turns it on by itself) puts Tomcat's RemoteIpValve in front of the application: it replaces the
 * remote address from X-Forwarded-For for any peer in its internal proxies (every private range
 * and loopback) before the agent sees the request, whatever the rule file trusts. The agent cannot
 * see the real peer then; it says so once, with the setting to change (review of the
 * twenty-third round).
 */
class ContainerForwardingIT {
    private static final String TOKEN = "forwarding-internal-token-012345";

    @TempDir
    Path dir;

    static Stream<Path> jdks() {
        return Jdks.all();
    }

    @ParameterizedTest(name = "on {0}")
    @MethodSource("jdks")
    void aContainerThatRewritesTheClientAddressIsNamedOnce(Path jdk) throws Exception {
        Path rules = Files.writeString(dir.resolve("rules.yaml"), "version: 1\nrules:\n"
                + "  - name: per-client\n    match: {http: {path: /api/**}}\n    key: client-ip\n"
                + "    limit: 3\n    window: 1h\n");
        try (WebApp app = WebApp.start(Container.SPRING_BOOT, jdk, rules,
                Map.of("RATELIMIT_INTERNAL_TOKEN", TOKEN, "SERVER_FORWARD_HEADERS_STRATEGY", "native"), List.of())) {
            // the valve trusts loopback: each made-up X-Forwarded-For is a client of its own
            for (int i = 0; i < 5; i++) {
                Response answer = app.getFrom("127.0.0.81", "/api/domains/shop.example.com",
                        "X-Forwarded-For: 203.0.113." + i);
                assertEquals(200, answer.status, () -> answer + "\n" + app.output());
            }
            String output = app.output();
            assertEquals(1, count(output, "the servlet container runs Tomcat's RemoteIpValve or RemoteIpFilter"), output);
            assertFalse(output.contains("203.0.113."), "no client address in the agent's words:\n" + output);
        }
    }

    private static int count(String text, String part) {
        int count = 0;
        for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) {
            count++;
        }
        return count;
    }
}
