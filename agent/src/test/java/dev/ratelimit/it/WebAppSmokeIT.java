package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.it.WebApp.Container;
import dev.ratelimit.it.WebApp.Response;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The servlet fixtures and the {@link WebApp} harness work: each container starts under the agent
 * with an empty rule file on each JDK, answers as the application alone would, and stops when
 * closed. No rate limiting is asserted here.
 */
class WebAppSmokeIT {
    private static final String TOKEN = "smoke-internal-token-0123456789a";

    @TempDir
    Path dir;

    static Stream<Arguments> containersAndJdks() {
        List<Arguments> all = new ArrayList<>();
        for (Container container : Container.values()) {
            Jdks.all().forEach(jdk -> all.add(Arguments.of(container, jdk)));
        }
        return all.stream();
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("containersAndJdks")
    void startsAnswersAndStops(Container container, Path jdk) throws Exception {
        assertEquals(32, TOKEN.length());
        Path rules = Files.writeString(dir.resolve("rules.yaml"), "version: 1\nrules: []\n");
        WebApp app = WebApp.start(container, jdk, rules, Map.of("RATELIMIT_INTERNAL_TOKEN", TOKEN), List.of());
        try (app) {
            assertTrue(app.port() > 0);
            assertEquals(container == Container.TOMCAT ? "/ctx" : container == Container.UNDERTOW ? "/uctx" : "",
                    app.contextPath());
            assertEquals("http://127.0.0.1:" + app.port() + app.contextPath(), app.base().toString());

            Response shop = app.get("/api/domains/shop.example.com");
            assertEquals(200, shop.status, () -> shop + "\n" + app.output());
            assertTrue(shop.body.contains("\"host\":\"shop.example.com\""), shop::toString);
            assertTrue(shop.body.contains("\"app\":\"app-shop\""), shop::toString);
            assertTrue(shop.header("content-type").startsWith("application/json"), shop::toString);
            assertNull(shop.header("RateLimit"), "no rules, no RateLimit header: " + shop);
            assertNull(shop.header("RateLimit-Policy"), shop::toString);
            assertEquals(200, app.get("/api/domains/blog.example.com").status);
            assertEquals(404, app.get("/api/domains/nope.example.com").status);

            assertEquals(401, app.post("/internal/turns/t1", "progress").status);
            assertEquals(401, app.post("/internal/turns/t1", "progress", "X-Internal-Token", "wrong").status);
            Response saved = app.post("/internal/turns/t1", "progress", "X-Internal-Token", TOKEN);
            assertEquals(200, saved.status, saved::toString);
            assertTrue(saved.body.contains("\"turn\":\"t1\""), saved::toString);
            assertEquals(401, app.get("/internal/preview-access?app=x").status);
            assertEquals(401, app.get("/internal/preview-access?app=x", "X-Internal-Token", TOKEN.substring(1)).status);
            Response preview = app.get("/internal/preview-access?app=x", "X-Internal-Token", TOKEN);
            assertEquals(200, preview.status, preview::toString);
            assertTrue(preview.body.contains("\"app\":\"x\""), preview::toString);
            assertTrue(preview.body.contains("\"preview\":true"), preview::toString);

            // Raw socket: exact request text, response parsed from the wire.
            Response raw = app.rawGet(app.contextPath() + "/api/domains/shop.example.com", "X-Repeated: a", "X-Repeated: b");
            assertEquals(200, raw.status, raw::toString);
            assertTrue(raw.body.contains("app-shop"), raw::toString);
            Response rawPost = app.raw("POST " + app.contextPath() + "/internal/turns/t2 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "X-Internal-Token: " + TOKEN + "\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
            assertEquals(200, rawPost.status, rawPost::toString);

            if (container.isSpringBoot()) {
                Response message = app.post("/api/messages?user=alice", "");
                assertEquals(200, message.status, message::toString);
            } else {
                fixtureOnlyEndpoints(app);
            }
        }
        assertFalse(app.isAlive(), "the child ended on close");
        assertTrue(app.stdout().length() > 0, "output stays readable after close");
    }

    private static void fixtureOnlyEndpoints(WebApp app) {
        Response ran = app.get("/api/domains/shop.example.com");
        assertEquals("ran", ran.header("X-App-Filter"), ran::toString);

        long[] before = stats(app);
        assertEquals(stats(app)[0], before[0], "/stats is not counted");
        assertEquals(stats(app)[1], before[1], "/stats is not counted");

        app.get("/api/domains/shop.example.com");
        long[] after = stats(app);
        assertEquals(before[0] + 1, after[0], "one servlet call");
        assertEquals(before[1] + 1, after[1], "one filter call");

        Response message = app.get("/api/messages?user=alice");
        assertEquals(200, message.status, message::toString);
        assertTrue(message.body.matches("\\{\"id\":\\d+}"), message::toString);
        assertEquals(200, app.post("/api/messages?user=bob", "").status);

        Response forward = app.get("/api/forward");
        assertEquals(200, forward.status, forward::toString);
        assertTrue(forward.body.contains("app-shop"), forward::toString);
        Response include = app.get("/api/include");
        assertEquals(200, include.status, include::toString);
        assertTrue(include.body.contains("app-shop"), include::toString);
        Response async = app.get("/api/async");
        assertEquals(200, async.status, async::toString);
        assertTrue(async.body.contains("app-blog"), async::toString);

        long[] beforeDispatch = stats(app);
        app.get("/api/forward");
        app.get("/api/async");
        long[] afterDispatch = stats(app);
        assertEquals(beforeDispatch[0] + 4, afterDispatch[0], "forward and async each run two servlets");
        assertEquals(beforeDispatch[1] + 2, afterDispatch[1], "the filter runs once per request");

        Response boom = app.get("/api/boom");
        assertEquals(200, boom.status, boom::toString);
        assertEquals(500, app.get("/api/boom?fail=true").status);

        Response unknown = app.get("/no/such/path");
        assertEquals(404, unknown.status, unknown::toString);

        // Path parameters are stripped by the container before mapping.
        Response jsession = app.rawGet(app.contextPath() + "/api;jsessionid=1/domains/shop.example.com");
        assertEquals(200, jsession.status, jsession::toString);
    }

    private static long[] stats(WebApp app) {
        WebApp.Stats stats = app.stats();
        return new long[] {stats.servletCalls(), stats.filterCalls()};
    }
}
