package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import dev.ratelimit.testing.Race;
import dev.ratelimit.testing.WindowGuard;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One HTTP suite, run against every container on every JDK: Jetty 12 (jakarta), Tomcat 9
 * (javax, context path /ctx), Undertow 2.3 (jakarta, context path /uctx) and the Spring Boot
 * executable jars of test-app (embedded Tomcat) and test-app-jetty (embedded Jetty), each in its own JVM
 * under the agent, over real HTTP on loopback. Every test is its own client: it sends from its
 * own 127.x.y.z source address, or names a client through the trusted proxy 127.0.0.1.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpSuiteIT {
    static final String TOKEN = "it-internal-token-6f1d0c3a9b8e4f27a5";
    private static final AtomicInteger ADDRESSES = new AtomicInteger();

    private final Map<String, WebApp> apps = new ConcurrentHashMap<>();

    static Stream<Arguments> targets() {
        return Jdks.all().flatMap(jdk -> Stream.of(WebApp.Container.values()).map(c -> Arguments.of(c, jdk)));
    }

    static Stream<Arguments> tomcat() {
        return Jdks.all().map(jdk -> Arguments.of(WebApp.Container.TOMCAT, jdk));
    }

    static Stream<Arguments> targetsButUndertow() {
        return targets().filter(arguments -> arguments.get()[0] != WebApp.Container.UNDERTOW);
    }

    static Stream<Arguments> springBootApps() {
        return Jdks.all().flatMap(jdk -> Stream.of(WebApp.Container.values())
                .filter(WebApp.Container::isSpringBoot).map(c -> Arguments.of(c, jdk)));
    }

    static Stream<Arguments> servletFixtures() {
        return Jdks.all().flatMap(jdk -> Stream.of(
                WebApp.Container.JETTY, WebApp.Container.TOMCAT, WebApp.Container.UNDERTOW)
                .map(c -> Arguments.of(c, jdk)));
    }

    @BeforeEach
    void startWellInsideAWindow() {
        WindowGuard.awayFromBoundary(3_600_000, 60_000);
    }

    @AfterAll
    void stopApps() {
        apps.values().forEach(WebApp::close);
    }

    WebApp app(WebApp.Container container, Path jdk) {
        return apps.computeIfAbsent(container + "@" + jdk, key -> {
            try {
                Path rules = Path.of(HttpSuiteIT.class.getResource("/http-rules.yaml").toURI());
                return WebApp.start(container, jdk, rules, Map.of("RATELIMIT_INTERNAL_TOKEN", TOKEN), List.of());
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
    }

    /** A loopback address no other test uses: a fresh client. */
    static String freshAddress() {
        int n = ADDRESSES.incrementAndGet();
        return "127.1." + (n / 250) + "." + (n % 250 + 2);
    }

    /** A documentation-range address no other test names through the proxy. */
    static String freshForwardedClient() {
        int n = ADDRESSES.incrementAndGet();
        return "198.51." + (n / 250) + "." + (n % 250 + 1);
    }

    private static String domains(WebApp app) {
        return app.contextPath() + "/api/domains/shop.example.com";
    }

    private static List<Integer> statuses(int n, Request request) throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            statuses.add(request.send(i).status);
        }
        return statuses;
    }

    private interface Request {
        WebApp.Response send(int i) throws Exception;
    }

    private static List<Integer> repeat(int status, int times) {
        List<Integer> list = new ArrayList<>();
        for (int i = 0; i < times; i++) {
            list.add(status);
        }
        return list;
    }

    private static List<Integer> concat(List<Integer> a, List<Integer> b) {
        List<Integer> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    // --- the incident's three tests ------------------------------------------------------------

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targets")
    void twentyRequestsWithTheInternalTokenAllPass(WebApp.Container container, Path jdk) throws Exception {
        WebApp app = app(container, jdk);
        String from = freshAddress();
        assertEquals(repeat(200, 20), statuses(20, i -> app.postFrom(from, app.contextPath() + "/internal/turns/" + i, "progress", "X-Internal-Token: " + TOKEN)));
        assertEquals(repeat(200, 20), statuses(20, i -> app.getFrom(from, domains(app),
                "X-Internal-Token: " + TOKEN)));
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targets")
    void plainRequestsFromOneAddressFirstFivePassThenAre429(WebApp.Container container, Path jdk) throws Exception {
        WebApp app = app(container, jdk);
        String from = freshAddress();
        assertEquals(concat(repeat(200, 5), repeat(429, 5)),
                statuses(10, i -> app.getFrom(from, domains(app))));
        // the internal routes answer 401 themselves until the limit, then the agent answers 429
        String other = freshAddress();
        assertEquals(concat(repeat(401, 5), repeat(429, 3)), statuses(8, i -> app.postFrom(other, app.contextPath() + "/internal/turns/1", "progress")));
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targets")
    void forgedTokensAreLimitedLikePlainRequests(WebApp.Container container, Path jdk) throws Exception {
        WebApp app = app(container, jdk);
        List<String> forged = List.of(
                TOKEN.substring(0, TOKEN.length() - 1) + "x",      // one character off
                TOKEN.substring(0, TOKEN.length() - 3),            // prefix
                TOKEN + "0",                                       // suffix
                "",                                                // empty
                TOKEN.toUpperCase(),                               // case-changed
                TOKEN.repeat(200));                                // very long
        for (String token : forged) {
            String from = freshAddress();
            assertEquals(concat(repeat(401, 5), repeat(429, 3)), statuses(8, i -> app.getFrom(from, app.contextPath() + "/internal/preview-access?app=a", "X-Internal-Token: " + token)),
                    "forged token of length " + token.length());
            String other = freshAddress();
            assertEquals(concat(repeat(200, 5), repeat(429, 3)), statuses(8, i -> app.getFrom(other, domains(app), "X-Internal-Token: " + token)), "forged token of length " + token.length());
        }
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targets")
    void aRepeatedTokenHeaderEarnsNothingEvenWithTheRealTokenInIt(WebApp.Container container, Path jdk)
            throws Exception {
        WebApp app = app(container, jdk);
        String from = freshAddress();
        assertEquals(concat(repeat(200, 5), repeat(429, 3)), statuses(8, i -> app.getFrom(from, domains(app), "X-Internal-Token: " + TOKEN, "X-Internal-Token: wrong-value")));
    }

    // --- concurrency -----------------------------------------------------------------------------

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targets")
    void aBurstOfOneHundredSimultaneousRequestsLetsExactlyFiveThrough(WebApp.Container container, Path jdk)
            throws Exception {
        WebApp app = app(container, jdk);
        int rounds = 20;
        int threads = 100;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            // each algorithm on the HTTP path: fixed window (domains-per-ip), sliding window and
            // token bucket (paths no servlet maps: the agent decides before the 404)
            for (String path : List.of(domains(app), app.contextPath() + "/api/sliding/x",
                    app.contextPath() + "/api/bucket/x")) {
                int expectedStatus = path.equals(domains(app)) ? 200 : 404;
                List<Integer> passed = new ArrayList<>();
                for (int round = 0; round < rounds; round++) {
                    String client = freshForwardedClient();
                    int ok = 0;
                    for (int status : Race.each(pool, threads,
                            t -> app.getFrom("127.0.0.1", path, "X-Forwarded-For: " + client).status)) {
                        assertTrue(status == expectedStatus || status == 429, path + ": status " + status);
                        ok += status == expectedStatus ? 1 : 0;
                    }
                    passed.add(ok);
                }
                assertEquals(repeat(5, rounds), passed, path);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The incident's three tests at once, on one client address: 40 requests with the internal
     * token, 30 with forged ones and 30 plain, released together. Every request with the token
     * passes and none of them is counted; of the others, exactly the limit passes, every round:
     * a forged token earns nothing, and the exemption is decided per request, not leaked to the
     * requests racing it (the concurrency audit found no latch test of forged tokens).
     */
    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targets")
    void aBurstMixingTheTokenForgedTokensAndPlainRequestsLetsEveryTokenAndExactlyFiveOthersThrough(
            WebApp.Container container, Path jdk) throws Exception {
        WebApp app = app(container, jdk);
        int rounds = 20;
        int threads = 100;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<String> wrong = new ArrayList<>();
            for (int round = 0; round < rounds; round++) {
                String client = freshForwardedClient();
                String forged = TOKEN.substring(0, TOKEN.length() - 1) + "x";
                // 0-39: the token; 40-69: forged (one character off); 70-99: plain
                int[] statuses = Race.each(pool, threads, t -> app.getFrom("127.0.0.1", domains(app),
                        t < 40 ? new String[] {"X-Forwarded-For: " + client, "X-Internal-Token: " + TOKEN}
                                : t < 70 ? new String[] {"X-Forwarded-For: " + client, "X-Internal-Token: " + forged}
                                : new String[] {"X-Forwarded-For: " + client}).status);
                int tokenPassed = 0;
                int othersPassed = 0;
                for (int t = 0; t < threads; t++) {
                    int status = statuses[t];
                    assertTrue(status == 200 || status == 429, "status " + status);
                    if (status == 200) {
                        if (t < 40) {
                            tokenPassed++;
                        } else {
                            othersPassed++;
                        }
                    }
                }
                if (tokenPassed != 40 || othersPassed != 5) {
                    wrong.add("round " + round + ": token " + tokenPassed + " of 40, others " + othersPassed + " of 60");
                }
            }
            assertEquals(List.of(), wrong);
        } finally {
            pool.shutdownNow();
        }
    }

    // --- client identity -------------------------------------------------------------------------

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targets")
    void aSpoofedForwardedForFromAnUntrustedPeerGetsNoFreshBudget(WebApp.Container container, Path jdk)
            throws Exception {
        WebApp app = app(container, jdk);
        String from = freshAddress();
        assertEquals(concat(repeat(200, 5), repeat(429, 5)), statuses(10, i -> app.getFrom(from, domains(app), "X-Forwarded-For: 203.0.113." + i, "Forwarded: for=192.0.2." + i)));
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targets")
    void aTrustedProxyNamesTheClientAndEachClientHasItsOwnBudget(WebApp.Container container, Path jdk)
            throws Exception {
        WebApp app = app(container, jdk);
        String a = freshForwardedClient();
        String b = freshForwardedClient();
        assertEquals(concat(repeat(200, 5), repeat(429, 2)), statuses(7, i -> app.getFrom("127.0.0.1", domains(app), "X-Forwarded-For: " + a + ", 127.0.0.1")));
        assertEquals(concat(repeat(200, 5), repeat(429, 2)), statuses(7, i -> app.getFrom("127.0.0.1", domains(app), "Forwarded: for=" + b)));
        // garbage in the header falls back to the peer, never to a fresh key per request
        String garbage = freshAddress();
        assertEquals(concat(repeat(200, 5), repeat(429, 2)), statuses(7, i -> app.getFrom(garbage, domains(app), "X-Forwarded-For: not-an-address-" + i)));
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targets")
    void ipv6ClientsAreGroupedByTheirSlash64(WebApp.Container container, Path jdk) throws Exception {
        WebApp app = app(container, jdk);
        int n = ADDRESSES.incrementAndGet();
        String network = "2001:db8:" + Integer.toHexString(n) + ":1:";
        assertEquals(concat(repeat(200, 5), repeat(429, 2)), statuses(7, i -> app.getFrom("127.0.0.1", domains(app), "X-Forwarded-For: " + network + ":" + Integer.toHexString(i + 1))));
        assertEquals(200, app.getFrom("127.0.0.1", domains(app),
                "X-Forwarded-For: 2001:db8:" + Integer.toHexString(n) + ":2::1").status);
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targets")
    void aHeaderKeyCountsEachValueApartAndAMissingHeaderIsOneKey(WebApp.Container container, Path jdk)
            throws Exception {
        WebApp app = app(container, jdk);
        String from = freshAddress();
        String tenant = "tenant-" + ADDRESSES.incrementAndGet();
        String target = app.contextPath() + "/api/messages?user=";
        assertEquals(concat(repeat(200, 3), repeat(429, 2)), statuses(5, i -> app.postFrom(from,
                target + tenant + "-a" + i, "", "X-Tenant: " + tenant)));
        assertEquals(200, app.postFrom(from, target + tenant + "-b", "", "X-Tenant: other-" + tenant).status);
        // no header at all is the one key "-": this is the only test that posts without one
        assertEquals(concat(repeat(200, 3), repeat(429, 1)), statuses(4, i -> app.postFrom(freshAddress(),
                target + tenant + "-c" + i, "")));
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targets")
    void theAgentStartedAndLoggedNoInstrumentationOrInternalError(WebApp.Container container, Path jdk)
            throws Exception {
        WebApp app = app(container, jdk);
        assertEquals(200, app.getFrom(freshAddress(), domains(app)).status);
        String log = app.output();
        assertTrue(log.contains("rate-limit-agent ") && log.contains(" started: config "), log);
        assertFalse(log.contains("could not instrument"), log);
        assertFalse(log.contains("internal error while"), log);
        // the container's servlet API is called directly, not through the fallback's method handles
        assertFalse(log.contains("go through method handles"), log);
    }

    // --- what a response carries -----------------------------------------------------------------

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targets")
    void allowedAndRejectedResponsesCarryTheRateLimitFieldsAndAProblemBody(WebApp.Container container, Path jdk)
            throws Exception {
        WebApp app = app(container, jdk);
        String from = freshAddress();
        WebApp.Response first = app.getFrom(from, domains(app));
        assertEquals(200, first.status);
        assertEquals("\"domains-per-ip\";q=5;w=3600", first.header("RateLimit-Policy"));
        Matcher allowed = Pattern.compile("\"domains-per-ip\";r=4;t=(\\d+)").matcher(first.header("RateLimit"));
        assertTrue(allowed.matches(), first.header("RateLimit"));
        int reset = Integer.parseInt(allowed.group(1));
        assertTrue(reset >= 1 && reset <= 3600, "t=" + reset);
        for (int i = 0; i < 4; i++) {
            assertEquals(200, app.getFrom(from, domains(app)).status);
        }
        WebApp.Response rejected = app.getFrom(from, domains(app));
        assertEquals(429, rejected.status);
        int retryAfter = Integer.parseInt(rejected.header("Retry-After"));
        assertTrue(retryAfter >= 1 && retryAfter <= 3600, "Retry-After " + retryAfter);
        assertEquals("\"domains-per-ip\";q=5;w=3600", rejected.header("RateLimit-Policy"));
        assertEquals("\"domains-per-ip\";r=0;t=" + retryAfter, rejected.header("RateLimit"));
        assertTrue(rejected.header("Content-Type").startsWith("application/problem+json"), rejected.toString());
        assertTrue(rejected.body.contains("\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\""),
                rejected.body);
        assertTrue(rejected.body.contains("\"status\":429"), rejected.body);
        assertTrue(rejected.body.contains("\"violated-policies\":[\"domains-per-ip\"]"), rejected.body);
        assertFalse(rejected.toString().contains(from), "the key must not appear: " + rejected);
        assertNull(rejected.header("X-App-Filter"), "the application's filter must not have run");
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targets")
    void noResponseExposesTheTokenOrTheClientAddress(WebApp.Container container, Path jdk) throws Exception {
        WebApp app = app(container, jdk);
        String client = freshForwardedClient();
        String forged = TOKEN + "-forged";
        for (int i = 0; i < 7; i++) {
            WebApp.Response response = app.getFrom("127.0.0.1", domains(app),
                    "X-Forwarded-For: " + client, "X-Internal-Token: " + forged);
            String all = response.toString();
            assertFalse(all.contains(client), all);
            assertFalse(all.contains(TOKEN), all);
        }
        assertFalse(app.output().contains(TOKEN), "the token must never be logged");
    }

    // --- the application's code is not reached, dispatches are not counted again ------------------

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("servletFixtures")
    void aRejectedRequestNeverReachesTheApplicationsFiltersOrServlets(WebApp.Container container, Path jdk)
            throws Exception {
        WebApp app = app(container, jdk);
        String from = freshAddress();
        for (int i = 0; i < 5; i++) {
            assertEquals(200, app.getFrom(from, domains(app)).status);
        }
        String before = stats(app);
        for (int i = 0; i < 5; i++) {
            assertEquals(429, app.getFrom(from, domains(app)).status);
        }
        assertEquals(before, stats(app), "no servlet or filter ran for the rejected requests");
    }

    private static String stats(WebApp app) throws Exception {
        return app.getFrom("127.0.0.9", app.contextPath() + "/stats").body;
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("servletFixtures")
    void forwardsIncludesAndAsyncDispatchesAreCountedOnce(WebApp.Container container, Path jdk) throws Exception {
        WebApp app = app(container, jdk);
        for (String path : List.of("/api/forward", "/api/include", "/api/async")) {
            String from = freshAddress();
            assertEquals(concat(repeat(200, 5), repeat(429, 1)), statuses(6, i -> app.getFrom(from, app.contextPath() + path)), path);
        }
    }

    /**
     * A method rule refuses a call after the application began its own response: a header, a
     * character encoding (here UTF-16, ISO-8859-1) and a few bytes, nothing committed. The 429
     * replaces all of it: its Content-Type is application/problem+json as the README shows it,
     * with no charset of the application's left on it (the body is UTF-8; a client that honours
     * {@code charset=UTF-16} decodes it as something that is not JSON). Undertow 2.3's
     * {@code reset()} keeps the encoding, and its {@code setContentType} appends it.
     */
    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("servletFixtures")
    void a429AfterTheApplicationBeganItsResponseKeepsNothingOfIt(WebApp.Container container, Path jdk)
            throws Exception {
        Path rules = Path.of(HttpSuiteIT.class.getResource("/http-rules.yaml").toURI());
        // its own application, closed at the end: one forked container at a time
        try (WebApp app = WebApp.start(container, jdk, rules, Map.of("RATELIMIT_INTERNAL_TOKEN", TOKEN), List.of())) {
        for (String written : List.of("writer", "stream")) {
            for (String charset : List.of("UTF-16", "ISO-8859-1")) {
                String from = freshAddress();
                String path = app.contextPath() + "/api/boom?written=" + written + "&charset=" + charset;
                app.getFrom(from, app.contextPath() + "/api/boom"); // the one guarded call allowed
                WebApp.Response rejected = app.getFrom(from, path);
                assertEquals(429, rejected.status, rejected::toString);
                assertNull(rejected.header("X-Partial"), rejected::toString);
                assertEquals("application/problem+json", rejected.header("Content-Type"),
                        () -> written + " " + charset + ": " + rejected);
                assertTrue(rejected.body.startsWith("{\"type\":"), rejected::toString);
            }
        }
        // a cookie the application added before the refused call is not on the 429 either:
        // reset() clears the headers, and a cookie is one
        // reset() clears the headers, and a cookie is one; the same through a filter's wrapper of the
        // response (Undertow's cookies were cleared only on its own response, not through a wrapper)
        for (String query : List.of("written=stream&cookie=remember", "written=stream&cookie=remember&wrap")) {
            String from = freshAddress();
            app.getFrom(from, app.contextPath() + "/api/boom");
            WebApp.Response rejected = app.getFrom(from, app.contextPath() + "/api/boom?" + query);
            assertEquals(429, rejected.status, rejected::toString);
            assertNull(rejected.header("Set-Cookie"), () -> query + ": " + rejected);
        }
        }
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("servletFixtures")
    void aRejectionThrownByAMethodRuleBecomesA429AndMethodRulesSeeTheRequest(WebApp.Container container, Path jdk)
            throws Exception {
        WebApp app = app(container, jdk);
        String from = freshAddress();
        assertEquals(200, app.getFrom(from, app.contextPath() + "/api/boom").status);
        WebApp.Response rejected = app.getFrom(from, app.contextPath() + "/api/boom");
        assertEquals(429, rejected.status, rejected::toString);
        assertTrue(rejected.body.contains("\"violated-policies\":[\"guarded-call\"]"), rejected.body);
        assertEquals("\"guarded-call\";q=1;w=3600", rejected.header("RateLimit-Policy"));
        // the method rule is keyed by client-ip, read from the request being served
        assertEquals(200, app.getFrom(freshAddress(), app.contextPath() + "/api/boom").status);
        // and the request's valid token exempts the method rule too
        String internal = freshAddress();
        assertEquals(repeat(200, 5), statuses(5, i -> app.getFrom(internal, app.contextPath() + "/api/boom", "X-Internal-Token: " + TOKEN)));

        // the same in an async dispatch: the method rule sees the request (its client, its
        // token), and its rejection becomes the 429, not a 500
        String async = app.contextPath() + "/api/async?to=boom";
        String client = freshAddress();
        assertEquals(200, app.getFrom(client, async).status);
        WebApp.Response rejectedInAsync = app.getFrom(client, async);
        assertEquals(429, rejectedInAsync.status, rejectedInAsync::toString);
        assertTrue(rejectedInAsync.body.contains("\"violated-policies\":[\"guarded-call\"]"), rejectedInAsync.body);
        assertEquals("\"domains-per-ip\";q=5;w=3600, \"guarded-call\";q=1;w=3600", rejectedInAsync.header("RateLimit-Policy"),
                rejectedInAsync::toString);
        assertEquals(200, app.getFrom(freshAddress(), async).status, "another client has its own key");
        String internalAsync = freshAddress();
        assertEquals(repeat(200, 4), statuses(4, i -> app.getFrom(internalAsync, async, "X-Internal-Token: " + TOKEN)));

        // called on the request's own thread after startAsync: the 429, at once. Nothing else
        // completes the request: with the 429 written and the exception swallowed, or with the
        // exception passed on, the container held it until the async timeout of 30 s
        String inline = app.contextPath() + "/api/async?to=inline";
        String caller = freshAddress();
        long completedBefore = asyncCompleted(app);
        assertEquals(200, app.getFrom(caller, inline).status);
        long started = System.nanoTime();
        WebApp.Response afterStartAsync = app.getFrom(caller, inline);
        long millis = (System.nanoTime() - started) / 1_000_000;
        System.out.printf("HttpSuiteIT [%s] rejection after startAsync: %d in %d ms%n", container, afterStartAsync.status,
                millis);
        assertTrue(millis < 10_000, () -> "the request was held " + millis + " ms: " + afterStartAsync);
        assertEquals(429, afterStartAsync.status, afterStartAsync::toString);
        assertTrue(afterStartAsync.body.contains("\"violated-policies\":[\"guarded-call\"]"), afterStartAsync.body);
        // and the container has ended the request: its asynchronous processing completed, not
        // left to time out 30 s later (the client had its 429 at once either way)
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (asyncCompleted(app) < completedBefore + 2 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(completedBefore + 2, asyncCompleted(app), "both asynchronous requests completed within 5 s");
    }

    private static long asyncCompleted(WebApp app) {
        return app.stats().asyncCompleted();
    }

    static Stream<Arguments> springBoot() {
        return Jdks.all().flatMap(jdk -> Stream.of(
                WebApp.Container.SPRING_BOOT, WebApp.Container.SPRING_BOOT_JETTY)
                .map(c -> Arguments.of(c, jdk)));
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("springBoot")
    void aRejectionWrappedBySpringMvcBecomesA429NotA500(WebApp.Container container, Path jdk) throws Exception {
        WebApp app = app(container, jdk);
        String user = "user-" + ADDRESSES.incrementAndGet();
        String from = freshAddress();
        String tenant = "X-Tenant: " + user;
        assertEquals(200, app.postFrom(from, "/api/messages?user=" + user, "", tenant).status);
        WebApp.Response rejected = app.postFrom(from, "/api/messages?user=" + user, "", tenant);
        assertEquals(429, rejected.status, rejected::toString);
        assertTrue(rejected.body.contains("\"violated-policies\":[\"send-per-user\"]"), rejected.body);
        // the HTTP rule that counted the request is listed beside the method rule that refused it
        assertEquals("\"per-tenant\";q=3;w=3600, \"send-per-user\";q=1;w=3600", rejected.header("RateLimit-Policy"),
                rejected::toString);
        assertTrue(rejected.header("RateLimit").startsWith("\"send-per-user\";r=0;t="), rejected::toString);
        assertFalse(rejected.toString().contains(user), "the key must not appear: " + rejected);
        assertEquals(200, app.postFrom(from, "/api/messages?user=other-" + user, "", tenant).status);
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targets")
    void encodedPathTricksCannotDodgeARule(WebApp.Container container, Path jdk) throws Exception {
        WebApp app = app(container, jdk);
        String from = freshAddress();
        String base = app.contextPath();
        for (int i = 0; i < 5; i++) {
            assertEquals(200, app.getFrom(from, domains(app)).status);
        }
        List<String> tricks = List.of(
                base + "/api;jsessionid=0123/domains/shop.example.com",
                base + "/api/domains;x=y/shop.example.com",
                base + "/api/%64omains/shop.example.com",
                base + "//api//domains/shop.example.com",
                base + "/api/./domains/shop.example.com",
                base + "/x/../api/domains/shop.example.com",
                base + "/api/domains/shop.example.com?x=1");
        for (String trick : tricks) {
            int status = app.getFrom(from, trick).status;
            assertNotEquals(200, status, trick + " reached the application after the budget was spent");
            assertTrue(status < 500, trick + " gave " + status);
        }
    }

    /**
     * A 429 to a request whose body the application never read leaves the connection usable: the
     * container either tells the client it closes it ({@code Connection: close}) or reads the rest
     * of the body and answers the next request on it. The agent wrote its 429 with a
     * Content-Length and flushed it, which committed the response before the container looked at
     * the unread body: Jetty then closed the connection without saying so, and a kept-alive
     * client's next request failed (HTTP review, fortieth round). Both sizes are over Jetty's
     * and Tomcat's own limits of what they read to keep a connection open.
     */
    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targets")
    void aRefusedRequestsUnreadBodyLeavesTheConnectionUsable(WebApp.Container container, Path jdk) throws Exception {
        WebApp app = app(container, jdk);
        String from = freshAddress();
        String target = app.contextPath() + "/internal/turns/1";
        assertEquals(repeat(401, 5), statuses(5, i -> app.postFrom(from, target, "progress")));
        for (int size : new int[] {20_000, 300_000, 1_500_000}) {
            byte[] head = ("POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
                    + "Content-Length: " + size + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
            byte[] refused = Arrays.copyOf(head, head.length + size);
            Arrays.fill(refused, head.length, refused.length, (byte) 'x');
            byte[] next = ("GET " + domains(app) + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1);
            WebApp.Response[] answers = app.twoOnOneConnection(from, refused, next);
            WebApp.Response refusal = answers[0];
            assertEquals(429, refusal.status, () -> size + " bytes: " + refusal);
            assertTrue(refusal.body.contains("\"violated-policies\":[\"internal-per-ip\"]"), () -> size + " bytes: " + refusal);
            if (answers[1] != null) {
                assertEquals(200, answers[1].status, size + " bytes: the next request on the connection: " + answers[1]);
            }
        }
    }

    /**
     * A container that maps a request without resolving its dot segments or decoding %2F
     * (Undertow serves {@code /internal/turns/t1/../../..} with the servlet at
     * {@code /internal/turns/*}) must not open a way past {@code internal-per-ip}: once a client's 5
     * are spent, no spelling reaches the handler that guards the internal token (its 401), on any
     * container. Before the agent matched the path the container routed by, Undertow served all
     * three, uncounted (the path review).
     */
    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targets")
    void dotSegmentsTheContainerDoesNotResolveCannotDodgeARule(WebApp.Container container, Path jdk) throws Exception {
        WebApp app = app(container, jdk);
        String from = freshAddress();
        String base = app.contextPath();
        assertEquals(repeat(401, 5), statuses(5, i -> app.postFrom(from, base + "/internal/turns/1", "progress")));
        for (String trick : List.of(
                base + "/internal/turns/t1/../../..",
                base + "/internal/turns/t1%2F..%2F..%2F..",
                base + "/internal/turns/a/../../../api/domains/x")) {
            WebApp.Response response = app.postFrom(from, trick, "progress", "X-Internal-Token: guess-123");
            assertFalse(response.status == 401 || response.status / 100 == 2,
                    trick + " reached the internal handler after the budget was spent: " + response);
        }
    }
    /**
     * {@code /api/domains/} names no domain: a rule on one segment under it
     * ({@code /api/domains/*}, {@code one-domain}) does not count it, on any container, though
     * Jetty, Tomcat and Undertow route it to the servlet mapped at {@code /api/domains/*} with the
     * path info {@code /}. The routed path's trailing slash once counted as a segment of its own
     * (found by the fix review of the routed path; unit-tested in HttpRequestsTest).
     */
    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targets")
    void aTrailingSlashIsNotASegmentOfItsOwn(WebApp.Container container, Path jdk) throws Exception {
        WebApp app = app(container, jdk);
        String from = freshAddress();
        String base = app.contextPath();
        for (int i = 0; i < 3; i++) {
            WebApp.Response response = app.send(from, "DELETE", base + "/api/domains/", null);
            assertNotEquals(429, response.status, "the trailing slash was counted: " + response);
        }
        assertNotEquals(429, app.send(from, "DELETE", base + "/api/domains/a", null).status,
                "the client's one call under one-domain");
        WebApp.Response second = app.send(from, "DELETE", base + "/api/domains/b", null);
        assertEquals(429, second.status, second.toString());
        assertTrue(second.body.contains("\"violated-policies\":[\"one-domain\"]"), second.body);
    }

    /**
     * Spring MVC routes by the URI with its dot segments kept, on Tomcat and Jetty alike:
     * {@code /api/reports/..} reaches the handler of {@code /api/reports/{user}} with the user
     * {@code ..}. The agent matched the resolved path only ({@code /api}), which a rule for
     * {@code /api/reports/*} does not cover, and a client past its budget called the handler as
     * often as it liked with {@code .} or {@code ..} as the user (a black-box review; 200 for every
     * spelling below on the demo under Tomcat, for the literal ones under Jetty).
     */
    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("springBootApps")
    void aDotSegmentSpringRoutesAsAPathVariableIsCountedByTheRuleOfItsHandler(WebApp.Container container, Path jdk)
            throws Exception {
        WebApp app = app(container, jdk);
        String from = freshAddress();
        assertEquals(List.of(200, 200), statuses(2, i -> app.getFrom(from, "/api/reports/bob")));
        for (String trick : List.of("/api/reports/..", "/api/reports/.", "/api/reports/%2e",
                "/api/reports/%2E%2E", "/api/reports/.%2e", "/api/reports/%2e;x", "/api/reports/..;jsessionid=1")) {
            WebApp.Response response = app.getFrom(from, trick);
            assertNotEquals(200, response.status, trick + " reached the handler after the budget was spent: " + response);
            assertTrue(response.status < 500, trick + " gave " + response);
        }
        // a client with budget left: the spelling is counted as a call of its own
        String fresh = freshAddress();
        assertEquals(200, app.getFrom(fresh, "/api/reports/..").status);
        assertEquals(200, app.getFrom(fresh, "/api/reports/bob").status);
        assertEquals(429, app.getFrom(fresh, "/api/reports/bob").status);
    }

    /**
     * A request the container answers itself before any filter or servlet (a GET of
     * {@code /WEB-INF/...}: 404) is counted under the path the client asked for, where its error
     * page runs: Tomcat sent its error page as the request's first entry point, uncounted, while
     * Jetty and Undertow counted it (servlet review, thirty-third round). The real token exempts
     * it, a forged one is counted. (The Tomcat fixture maps an error page for 404; with none, Tomcat
     * answers such a request without any code of the application, and the agent sees nothing, as
     * Undertow does whatever its error pages: it ends the exchange with a bare 404.)
     */
    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targetsButUndertow")
    void aRequestTheContainerRefusesItselfIsCountedByThePathAskedFor(WebApp.Container container, Path jdk)
            throws Exception {
        WebApp app = app(container, jdk);
        String target = app.contextPath() + "/WEB-INF/web.xml";
        String from = freshAddress();
        List<Integer> first = statuses(2, i -> app.getFrom(from, target));
        assertEquals(List.of(404, 404), first, "refused by the container, within the limit");
        WebApp.Response over = app.getFrom(from, target);
        assertEquals(429, over.status, over::toString);
        assertEquals(List.of(404, 404), statuses(2, i -> app.getFrom(from, app.contextPath() + "/WEB-INF/classes/x")),
                "a path no rule names");
        String exempt = freshAddress();
        assertEquals(repeat(404, 4), statuses(4, i -> app.getFrom(exempt, target, "X-Internal-Token: " + TOKEN)));
        String forged = freshAddress();
        assertEquals(List.of(404, 404, 429), statuses(3, i -> app.getFrom(forged, target,
                "X-Internal-Token: " + TOKEN.substring(1))));
    }

    /**
     * A refused request is matched by the method the client sent, not its error dispatch's:
     * Servlet 6.1 containers (Tomcat 11 under Spring Boot, Jetty 12's ee11) dispatch the error page
     * as a GET, so refused POSTs were counted by a rule of GETs and never by one of POSTs (HTTP
     * review, thirty-seventh round). Tomcat 9 and Jetty's ee10 keep the client's method.
     */
    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("targetsButUndertow")
    void aRequestTheContainerRefusesItselfIsMatchedByTheMethodSent(WebApp.Container container, Path jdk)
            throws Exception {
        WebApp app = app(container, jdk);
        String target = app.contextPath() + "/WEB-INF/posted";
        String from = freshAddress();
        assertEquals(List.of(404, 404, 429), statuses(3, i -> app.send(from, "POST", target, "x")),
                "webinf-posts: 2 POSTs");
        assertEquals(List.of(404, 404, 404, 429), statuses(4, i -> app.getFrom(from, target)),
                "webinf-gets: 3 GETs, none of them spent by the POSTs");
    }

    /**
     * A filter that wraps the request in a wrapper keeping attributes of its own (the agent's mark
     * of a seen request does not show through it) passes the same request on: counted once. It
     * was taken for a sub-request and counted again, so a client had half its limit (servlet
     * review, thirty-third round). Tomcat's fixture has the filter.
     */
    @ParameterizedTest(name = "{1}")
    @MethodSource("tomcat")
    void aWrapperWithAttributesOfItsOwnIsTheSameRequest(WebApp.Container container, Path jdk) throws Exception {
        WebApp app = app(container, jdk);
        String from = freshAddress();
        String target = domains(app) + "?ownAttributes";
        assertEquals(repeat(200, 5), statuses(5, i -> app.getFrom(from, target)));
        assertEquals(429, app.getFrom(from, target).status);
    }
}
