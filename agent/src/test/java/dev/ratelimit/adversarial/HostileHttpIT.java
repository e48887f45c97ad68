package dev.ratelimit.adversarial;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.it.WebApp;
import dev.ratelimit.testing.WindowGuard;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * An attacker's HTTP requests against the Spring Boot test-app under the agent (and the same app
 * without the agent, as the baseline for what the application itself answers). 127.0.0.1 is the
 * trusted proxy; every other client is a loopback address of its own. The three invariants:
 * <ul>
 *   <li>never a 5xx caused by the agent;
 *   <li>never an exemption without the real token;
 *   <li>never a fresh budget from a made-up header or path: once a client's budget is spent, every
 *       variant still gets 429 (or is refused by the container before reaching the application).
 * </ul>
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HostileHttpIT {
    private static final String TOKEN = "hostile-it-token-3c9e7a51d2b84f06";
    private static final int LIMIT = 3;
    private static final String DOMAIN = "/api/domains/shop.example.com";
    private static final AtomicInteger ADDRESSES = new AtomicInteger();

    @TempDir
    static Path dir;

    private WebApp app;
    private WebApp baseline;
    private final List<String> allStatuses = new ArrayList<>();

    @BeforeAll
    void start() throws Exception {
        Path rules = Files.writeString(dir.resolve("hostile-rules.yaml"), String.join("\n",
                "version: 1",
                "exempt:",
                "  header: X-Internal-Token",
                "  tokens:",
                "    - ${env:RATELIMIT_INTERNAL_TOKEN}",
                "client:",
                "  trusted-proxies: [127.0.0.1/32]",
                "rules:",
                "  - name: domains-per-client",
                "    match:",
                "      http:",
                "        path: /api/domains/**",
                "    key: client-ip",
                "    limit: " + LIMIT,
                "    window: 1h",
                "  - name: internal-per-client",
                "    match:",
                "      http:",
                "        path: /internal/**",
                "    key: client-ip",
                "    limit: " + LIMIT,
                "    window: 1h",
                "  - name: account-per-credential",
                "    match:",
                "      http:",
                "        path: /api/account/**",
                "    key: header:Authorization",
                "    limit: " + LIMIT,
                "    window: 1h",
                ""));
        Path jdk = Path.of(System.getProperty("java.home"));
        Map<String, String> env = Map.of("RATELIMIT_INTERNAL_TOKEN", TOKEN);
        app = WebApp.start(WebApp.Container.SPRING_BOOT, jdk, rules, env, List.of());
        baseline = WebApp.startWithoutAgent(WebApp.Container.SPRING_BOOT, jdk, env);
    }

    @AfterAll
    void stop() {
        if (app != null) {
            String output = app.output();
            app.close();
            // never an agent frame in the application's log, and no agent error at all
            assertFalse(output.contains("internal error while"), output);
            assertFalse(output.contains("at dev.ratelimit.") || output.contains("rate-limit-agent//"), output);
            assertFalse(allStatuses.stream().anyMatch(s -> s.startsWith("5")), allStatuses::toString);
        }
        if (baseline != null) {
            baseline.close();
        }
    }

    @BeforeEach
    void wellInsideAWindow() {
        WindowGuard.awayFromBoundary(3_600_000, 120_000);
    }

    private static String freshSource() {
        int n = ADDRESSES.incrementAndGet();
        return "127.2." + (n / 250) + "." + (n % 250 + 2);
    }

    private WebApp.Response get(WebApp target, String source, String path, String... headers) {
        WebApp.Response response = target.getFrom(source, path, headers);
        if (target == app) {
            allStatuses.add(response.status + " " + path.substring(0, Math.min(60, path.length())));
        }
        return response;
    }

    /** Spends a client's budget (LIMIT allowed, then a 429) with the given headers. */
    private void spend(String source, String path, String... headers) {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i <= LIMIT; i++) {
            statuses.add(get(app, source, path, headers).status);
        }
        assertEquals(429, statuses.get(LIMIT), () -> "budget not spent: " + statuses + "\n" + app.output());
    }

    /** Each variant must still get 429 (or 400 from the container, before the application). */
    private void assertAllLimited(String attack, String source, String path, Map<String, String[]> variants) {
        Map<String, Integer> seen = new LinkedHashMap<>();
        variants.forEach((name, headers) -> seen.put(name, get(app, source, path, headers).status));
        report(attack, seen);
        List<String> wrong = seen.entrySet().stream().filter(e -> e.getValue() != 429 && e.getValue() != 400)
                .map(e -> e.getKey() + " -> " + e.getValue()).collect(Collectors.toList());
        assertTrue(wrong.isEmpty(), () -> attack + ": a fresh budget or an error:\n" + String.join("\n", wrong));
    }

    private static void report(String attack, Map<String, Integer> seen) {
        System.out.println("== " + attack);
        seen.forEach((name, status) -> System.out.printf("  %3d  %s%n", status, name));
    }

    private static String[] h(String... lines) {
        return lines;
    }

    private static String repeat(String unit, int totalChars) {
        StringBuilder s = new StringBuilder(totalChars + unit.length());
        while (s.length() < totalChars) {
            s.append(unit);
        }
        return s.toString();
    }

    /** n distinct addresses that no test uses as a client: each would be a fresh key if believed. */
    private static String addresses(int n, String separator) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                s.append(separator);
            }
            s.append("198.18.").append(i / 250).append('.').append(i % 250 + 1);
        }
        return s.toString();
    }

    // ---------------------------------------------------------------- forwarding headers

    /**
     * From the trusted proxy, a chain that cannot be believed names the proxy itself (the peer). The
     * peer's budget is spent first, so a garbage chain that were taken as a new client would show as
     * a 200. 7 KB is the most the container takes in one header (64 KB is refused with 400).
     */
    @Test
    void garbageAndOversizedForwardingHeadersFallBackToTheSpentPeer() {
        String proxy = "127.0.0.1";
        spend(proxy, DOMAIN);
        Map<String, String[]> v = new LinkedHashMap<>();
        v.put("XFF word", h("X-Forwarded-For: garbage"));
        v.put("XFF empty", h("X-Forwarded-For: "));
        v.put("XFF commas", h("X-Forwarded-For: ,,,,"));
        v.put("XFF unknown", h("X-Forwarded-For: unknown"));
        v.put("XFF address then garbage", h("X-Forwarded-For: 198.18.200.1, garbage"));
        v.put("XFF address with trailing word", h("X-Forwarded-For: 198.18.200.2 garbage"));
        v.put("XFF out of range", h("X-Forwarded-For: 999.999.999.999"));
        v.put("XFF hex", h("X-Forwarded-For: 0xc6.0x12.0xc8.0x03"));
        v.put("XFF integer", h("X-Forwarded-For: 3323119620"));
        v.put("XFF short form", h("X-Forwarded-For: 198.18.51205"));
        v.put("XFF leading zeros (octal?)", h("X-Forwarded-For: 198.018.200.06"));
        v.put("XFF control char", h("X-Forwarded-For: 198.18.200.7\u0001"));
        v.put("XFF NUL inside", h("X-Forwarded-For: 198.18.\u0000200.8"));
        v.put("XFF Latin-1 digits", h("X-Forwarded-For: 198.18.200.\u00b9"));
        v.put("XFF host name", h("X-Forwarded-For: attacker.example"));
        v.put("XFF 7 KB of one entry", h("X-Forwarded-For: " + repeat("a", 7000)));
        v.put("XFF 100 header lines of distinct addresses", addressLines("X-Forwarded-For: ", 100));
        // (leading spaces are dropped by the container: "7 KB of spaces, then an address" is a valid claim of the proxy)
        v.put("XFF address, 7 KB of spaces, garbage", h("X-Forwarded-For: 198.18.200.9," + repeat(" ", 7000) + "x"));
        v.put("Forwarded word", h("Forwarded: for=garbage"));
        v.put("Forwarded unknown", h("Forwarded: for=unknown"));
        v.put("Forwarded obfuscated", h("Forwarded: for=_hidden"));
        v.put("Forwarded empty", h("Forwarded: "));
        v.put("Forwarded no value", h("Forwarded: for"));
        v.put("Forwarded two for pairs", h("Forwarded: for=198.18.200.10;for=198.18.200.11"));
        v.put("Forwarded unclosed quote", h("Forwarded: for=\"198.18.200.12"));
        v.put("Forwarded unclosed bracket", h("Forwarded: for=\"[2001:db8:99::1\""));
        v.put("Forwarded separators", h("Forwarded: =;;;,,,;=;"));
        v.put("Forwarded 7 KB", h("Forwarded: " + addresses(400, ";")));
        v.put("XFF garbage beats a valid Forwarded", h("X-Forwarded-For: garbage", "Forwarded: for=198.18.200.13"));
        assertAllLimited("forwarding-header garbage from the trusted proxy", proxy, DOMAIN, v);
    }

    /**
     * Behind the trusted proxy, the key is the address the proxy appended, whatever the client wrote
     * before it: a long chain, many entries, a line of its own, a Forwarded line left inside a
     * quote. These once made the proxy's own address the key (review of the twenty-third round):
     * the cases "7 KB of distinct addresses", "65 entries" and "7 KB of elements" stood in the
     * garbage test above as the proxy's own garbage, and a client could take the proxy's budget
     * and use it up, refusing the proxy's own requests (a load balancer's health checks). Here the
     * client's budget is spent, and the proxy's own, under this rule, is never charged.
     */
    @Test
    void whatAClientWritesLeftOfWhatTheProxyAppendsChangesNothing() {
        String proxy = "127.0.0.1";
        String path = "/internal/preview-access";
        String client = "198.18.240.7";
        spend(proxy, path, "X-Forwarded-For: " + client);
        Map<String, String[]> v = new LinkedHashMap<>();
        v.put("XFF 7 KB of made-up addresses, then the client", h("X-Forwarded-For: " + addresses(400, ",") + ", " + client));
        v.put("XFF 65 made-up entries, then the client", h("X-Forwarded-For: " + addresses(65, ", ") + ", " + client));
        v.put("the client's own XFF line, then the proxy's", h("X-Forwarded-For: " + addresses(400, ","),
                "X-Forwarded-For: " + client));
        v.put("Forwarded 7 KB of made-up elements, then the client",
                h("Forwarded: for=" + addresses(300, ",for=") + ",for=" + client));
        v.put("a Forwarded line left inside a quote, then the proxy's", h("Forwarded: for=198.18.1.1;x=\"",
                "Forwarded: for=" + client));
        assertAllLimited("made-up entries left of the client", proxy, path, v);
        WebApp.Response own = get(app, proxy, path);
        assertTrue(own.status != 429, () -> "the proxy's own budget was charged: " + own + "\n" + app.output());
    }

    private static String[] addressLines(String prefix, int n) {
        String[] lines = addresses(n, "\n").split("\n");
        for (int i = 0; i < lines.length; i++) {
            lines[i] = prefix + lines[i];
        }
        return lines;
    }

    /** A client that is not a trusted proxy cannot name anyone: no header gives it a fresh budget. */
    @Test
    void anUntrustedClientCannotNameAnotherClient() {
        String source = freshSource();
        spend(source, DOMAIN);
        Map<String, String[]> v = new LinkedHashMap<>();
        v.put("XFF", h("X-Forwarded-For: 198.18.201.1"));
        v.put("XFF naming the proxy", h("X-Forwarded-For: 127.0.0.1"));
        v.put("Forwarded", h("Forwarded: for=198.18.201.2"));
        v.put("X-Real-IP", h("X-Real-IP: 198.18.201.3"));
        v.put("True-Client-IP", h("True-Client-IP: 198.18.201.4"));
        v.put("X-Forwarded-Host and -Proto", h("X-Forwarded-Host: other.example", "X-Forwarded-Proto: https"));
        v.put("X-Tenant", h("X-Tenant: someone-else"));
        assertAllLimited("an untrusted client making up its address", source, DOMAIN, v);
    }

    // ---------------------------------------------------------------- IPv6

    /** Through the proxy, every spelling of one IPv6 client (and of its /64) is the same client. */
    @Test
    void ipv6ZonesAndBracketsDoNotMakeANewClient() {
        String proxy = "127.0.0.1";
        spend(proxy, DOMAIN, "X-Forwarded-For: 2001:db8:77::1");
        Map<String, String[]> v = new LinkedHashMap<>();
        v.put("brackets", h("X-Forwarded-For: [2001:db8:77::1]"));
        v.put("brackets and port", h("X-Forwarded-For: [2001:db8:77::1]:443"));
        v.put("zone", h("X-Forwarded-For: 2001:db8:77::1%eth0"));
        v.put("another zone", h("X-Forwarded-For: 2001:db8:77::1%eth1"));
        v.put("numeric zone", h("X-Forwarded-For: 2001:db8:77::1%1"));
        v.put("encoded zone", h("X-Forwarded-For: 2001:db8:77::1%25eth0"));
        v.put("empty zone", h("X-Forwarded-For: 2001:db8:77::1%"));
        v.put("7 KB zone", h("X-Forwarded-For: 2001:db8:77::1%" + repeat("z", 7000)));
        v.put("brackets, zone and port", h("X-Forwarded-For: [2001:db8:77::1%eth0]:80"));
        v.put("upper case, expanded", h("X-Forwarded-For: 2001:0DB8:0077:0000:0000:0000:0000:0001"));
        v.put("same /64, other host", h("X-Forwarded-For: 2001:db8:77::ffff"));
        v.put("same /64, random interface id", h("X-Forwarded-For: 2001:db8:77:0:1234:5678:9abc:def0"));
        v.put("unclosed bracket", h("X-Forwarded-For: [2001:db8:77::1"));
        v.put("bracket, port, no close", h("X-Forwarded-For: 2001:db8:77::1]:80"));
        v.put("two double colons", h("X-Forwarded-For: 2001::db8::77"));
        v.put("nine groups", h("X-Forwarded-For: 2001:db8:77:0:0:0:0:1:1"));
        v.put("Forwarded quoted with port", h("Forwarded: for=\"[2001:db8:77::1]:4711\""));
        v.put("Forwarded quoted with zone", h("Forwarded: for=\"[2001:db8:77::1%eth0]\""));
        v.put("Forwarded unquoted brackets", h("Forwarded: for=[2001:db8:77::1]"));
        assertAllLimited("IPv6 spellings of a spent client", proxy, DOMAIN, v);
    }

    /** An IPv4 client in IPv4-mapped IPv6 spellings is the same client. */
    @Test
    void ipv4MappedSpellingsDoNotMakeANewClient() {
        String proxy = "127.0.0.1";
        spend(proxy, DOMAIN, "X-Forwarded-For: 198.18.77.7");
        Map<String, String[]> v = new LinkedHashMap<>();
        v.put("mapped", h("X-Forwarded-For: ::ffff:198.18.77.7"));
        v.put("mapped, brackets", h("X-Forwarded-For: [::ffff:198.18.77.7]"));
        v.put("mapped, hex", h("X-Forwarded-For: ::ffff:c612:4d07"));
        v.put("mapped, expanded", h("X-Forwarded-For: 0:0:0:0:0:ffff:198.18.77.7"));
        v.put("with port", h("X-Forwarded-For: 198.18.77.7:8080"));
        v.put("with spaces", h("X-Forwarded-For:    198.18.77.7   "));
        v.put("Forwarded quoted with port", h("Forwarded: for=\"198.18.77.7:4711\""));
        v.put("Forwarded upper-case FOR", h("Forwarded: FOR=198.18.77.7"));
        assertAllLimited("IPv4-mapped spellings of a spent client", proxy, DOMAIN, v);
    }

    // ---------------------------------------------------------------- tokens

    @Test
    void theRealTokenIsExemptAndNothingElseIs() {
        String insider = freshSource();
        for (int i = 0; i < 3 * LIMIT; i++) {
            assertEquals(200, get(app, insider, DOMAIN, "X-Internal-Token: " + TOKEN).status, app::output);
        }

        String attacker = freshSource();
        spend(attacker, DOMAIN);
        String truncated = TOKEN.substring(0, TOKEN.length() - 1);
        Map<String, String[]> v = new LinkedHashMap<>();
        v.put("empty", h("X-Internal-Token:"));
        v.put("blank", h("X-Internal-Token:    "));
        v.put("empty twice", h("X-Internal-Token:", "X-Internal-Token:"));
        v.put("wrong twice", h("X-Internal-Token: guess-one-guess-one", "X-Internal-Token: guess-two-guess-two"));
        v.put("truncated", h("X-Internal-Token: " + truncated));
        v.put("truncated, twice", h("X-Internal-Token: " + truncated, "X-Internal-Token: " + truncated));
        v.put("one character more", h("X-Internal-Token: " + TOKEN + "x"));
        v.put("upper case", h("X-Internal-Token: " + TOKEN.toUpperCase()));
        v.put("truncated + NUL", h("X-Internal-Token: " + truncated + "\u0000"));
        v.put("truncated + 0x01", h("X-Internal-Token: " + truncated + "\u0001"));
        v.put("truncated + DEL", h("X-Internal-Token: " + truncated + "\u007f"));
        v.put("truncated + tab + char", h("X-Internal-Token: " + truncated + "\t" + TOKEN.charAt(TOKEN.length() - 1)));
        v.put("truncated + Latin-1", h("X-Internal-Token: " + truncated + "\u00e9"));
        v.put("comma list of wrong tokens", h("X-Internal-Token: " + truncated + "," + truncated));
        v.put("7 KB", h("X-Internal-Token: " + repeat(truncated, 7000)));
        v.put("other header name", h("X-Internal-Token2: " + truncated));
        v.put("underscore name", h("X_Internal_Token: " + truncated));
        v.put("sha256 of the token's name", h("X-Internal-Token: sha256:" + "0".repeat(64)));
        assertAllLimited("made-up internal tokens after the budget is spent", attacker, DOMAIN, v);

        // control characters the container might pass on, as raw bytes (CR alone, a bare LF inside)
        Map<String, Integer> raw = new LinkedHashMap<>();
        raw.put("bare CR inside", rawStatus(attacker, "X-Internal-Token: " + truncated + "\rX"));
        raw.put("obs-fold continuation", rawStatus(attacker, "X-Internal-Token: " + truncated + "\r\n " + "x"));
        raw.put("UTF-8 bytes", rawStatus(attacker, "X-Internal-Token: " + new String((truncated + "\u00e9")
                .getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1)));
        report("raw control bytes in the token header", raw);
        raw.forEach((name, status) -> assertTrue(status == 429 || status == 400, name + " -> " + status));

        // the internal routes: the app itself answers 401 to a wrong token; the agent still counts it
        String prober = freshSource();
        List<Integer> internal = new ArrayList<>();
        for (int i = 0; i <= LIMIT; i++) {
            internal.add(app.postFrom(prober, "/internal/turns/1", "x", "X-Internal-Token: " + truncated).status);
            allStatuses.add(internal.get(i) + " /internal/turns/1");
        }
        assertEquals(List.of(401, 401, 401, 429), internal, app::output);
    }

    /**
     * A rule keyed on {@code header:Authorization}: a credential is one budget however its scheme
     * and the spaces after it are spelt (RFC 9110 leaves both to the client, and applications
     * accept every spelling), and from any address. Keyed as sent, each spelling was a fresh one.
     */
    @Test
    void oneCredentialIsOneBudgetHoweverItsSchemeIsSpelt() {
        String path = "/api/account/settings";
        String credential = "Authorization: Bearer a1B2c3.D4e5-f6_g7~";
        spend(freshSource(), path, credential);
        Map<String, String[]> v = new LinkedHashMap<>();
        v.put("lower-case scheme", h("Authorization: bearer a1B2c3.D4e5-f6_g7~"));
        v.put("upper-case scheme", h("Authorization: BEARER a1B2c3.D4e5-f6_g7~"));
        v.put("mixed-case scheme", h("Authorization: bEaReR a1B2c3.D4e5-f6_g7~"));
        v.put("three spaces", h("Authorization: Bearer   a1B2c3.D4e5-f6_g7~"));
        v.put("a tab", h("Authorization: Bearer\ta1B2c3.D4e5-f6_g7~"));
        v.put("trailing spaces", h("Authorization: Bearer a1B2c3.D4e5-f6_g7~   "));
        v.put("lower-case header name", h("authorization: bearer a1B2c3.D4e5-f6_g7~"));
        assertAllLimited("spellings of a spent credential", freshSource(), path, v);
        // another credential is another budget
        assertNotEquals(429, get(app, freshSource(), path, "Authorization: Bearer a1B2c3.D4e5-f6_g7X").status);
    }

    private int rawStatus(String source, String headerLine) {
        String request = "GET " + DOMAIN + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headerLine + "\r\nConnection: close\r\n\r\n";
        try {
            int status = app.raw(source, request.getBytes(StandardCharsets.ISO_8859_1)).status;
            allStatuses.add(status + " raw");
            return status;
        } catch (UncheckedIOException e) {
            return 400; // the container closed the connection: refused before the application
        }
    }

    // ---------------------------------------------------------------- paths

    /** 8 KB paths: counted like any other (no 5xx, no escape from the rule), compared with the app alone. */
    @Test
    void eightKilobytePathsAreCountedAndNeverBreakTheRequest() {
        List<String> paths = List.of(
                "/api/domains/" + repeat("a", 7600),
                "/api" + repeat("/.", 3700) + "/domains/shop.example.com",
                "/api" + repeat("/x/..", 1500) + "/domains/shop.example.com",
                "/api/domains/" + repeat("%61", 2500),
                "/api" + repeat(";p=1", 1800) + "/domains/shop.example.com",
                "/api/domains" + repeat("/", 7500) + "shop.example.com");
        Map<String, Integer> seen = new LinkedHashMap<>();
        List<String> wrong = new ArrayList<>();
        for (String path : paths) {
            String label = path.substring(0, 40) + "... (" + path.length() + " chars)";
            int alone = get(baseline, freshSource(), path).status;
            String source = freshSource();
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i <= LIMIT; i++) {
                statuses.add(get(app, source, path).status);
            }
            seen.put(label + " alone " + alone + ", agent " + statuses, statuses.get(LIMIT));
            boolean reachedTheApp = alone < 400 || alone == 404;
            boolean ok = statuses.subList(0, LIMIT).stream().allMatch(s -> s == alone)
                    && (reachedTheApp ? statuses.get(LIMIT) == 429 : statuses.get(LIMIT) == alone);
            if (!ok && alone != 404) {
                wrong.add(label + ": alone " + alone + ", under the agent " + statuses);
            } else if (!ok && statuses.stream().anyMatch(s -> s >= 500)) {
                wrong.add(label + ": alone " + alone + ", under the agent " + statuses);
            }
        }
        report("8 KB paths", seen);
        assertTrue(wrong.isEmpty(), () -> String.join("\n", wrong));
    }

    /**
     * Encoded and non-canonical spellings of a limited path: whatever the application serves as the
     * domain lookup (200 without the agent) must be counted under the same rule and key.
     */
    @Test
    void encodedPathTricksDoNotEscapeTheRule() {
        String source = freshSource();
        spend(source, DOMAIN);
        List<String> tricks = List.of(
                "/api/domains/shop.example.com/",
                "/api//domains/shop.example.com",
                "//api/domains/shop.example.com",
                "/./api/domains/shop.example.com",
                "/api/./domains/shop.example.com",
                "/api/x/../domains/shop.example.com",
                "/x/../api/domains/shop.example.com",
                "/api/%2e/domains/shop.example.com",
                "/api/x/%2e%2e/domains/shop.example.com",
                "/api/x/%2E%2E/domains/shop.example.com",
                "/api/%64omains/shop.example.com",
                "/%61pi/domains/shop.example.com",
                "/api/domains/%73hop.example.com",
                "/api/domains/shop%2Eexample%2Ecom",
                "/api/%2564omains/shop.example.com",
                "/api;x=y/domains/shop.example.com",
                "/api/domains;jsessionid=abc/shop.example.com",
                "/api/domains/shop.example.com;x=1",
                "/api;/domains;/shop.example.com;",
                "/api%2Fdomains/shop.example.com",
                "/api/domains%2fshop.example.com",
                "/api/domains/shop.example.com%00",
                "/api/domains/shop.example.com?x=1",
                "/api/domains/shop.example.com?",
                "/api/domains/shop.example.com#fragment",
                "/API/domains/shop.example.com",
                "/api/Domains/shop.example.com",
                "/api\\domains/shop.example.com",
                "/api/domains/shop.example.com%20",
                "/%2e/api/domains/shop.example.com",
                "/api/domains/./shop.example.com",
                "http://127.0.0.1" + DOMAIN,
                "http://other.example" + DOMAIN);
        Map<String, Integer> seen = new LinkedHashMap<>();
        List<String> wrong = new ArrayList<>();
        for (String path : tricks) {
            int alone = get(baseline, freshSource(), path).status;
            int limited = get(app, source, path).status;
            seen.put(path + "   (without the agent: " + alone + ")", limited);
            if (alone == 200 && limited != 429) {
                wrong.add(path + ": served without the agent (200) but not limited under it: " + limited);
            }
            if (limited >= 500 && alone < 500) {
                wrong.add(path + ": " + limited + " under the agent, " + alone + " without it");
            }
            if (alone != 200 && limited != alone && limited != 429) {
                wrong.add(path + ": " + limited + " under the agent, " + alone + " without it");
            }
        }
        report("encoded-path tricks after the budget is spent (status under the agent)", seen);
        assertTrue(wrong.isEmpty(), () -> String.join("\n", wrong));
    }
}
