package dev.ratelimit.http;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.config.HttpMatch;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class RequestPathTest {

    static String path(String uri) {
        return RequestPath.normalize(uri, "");
    }

    @ParameterizedTest
    @ValueSource(strings = {"/", "/api", "/api/users/42", "/files/report.pdf", "/a-b_c~d/E.F", "/api/v1/users/me",
            "/caf\u00e9", "/x/.hidden", "/x/...", "/x/a..b"})
    void normalPathsAreUnchanged(String normal) {
        assertEquals(normal, path(normal));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "/api/x?debug=1|/api/x",
            "/api/x#frag|/api/x",
            "/api/x?a=/../internal#f|/api/x",
            "/api?|/api",
            "?x|/"})
    void queryAndFragmentAreCut(String uri, String expected) {
        assertEquals(expected, path(uri));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "/api;jsessionid=1/x|/api/x",
            "/api/x;a=b|/api/x",
            "/api;a=b;c=d/x;e=f/y|/api/x/y",
            "/;x=1/api|/api",
            "/x/..;/internal/a|/internal/a",
            "/x/.;/internal|/x/internal",
            "/api;/x|/api/x"})
    void pathParametersAreRemovedFromEverySegment(String uri, String expected) {
        assertEquals(expected, path(uri));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "/%61%70%69/x|/api/x",
            "/api%2Fsecret|/api/secret",
            "/api%2fsecret|/api/secret",
            "/api%5Csecret|/api/secret",
            "/caf%C3%A9|/caf\u00e9",
            "/%E2%82%AC|/\u20ac",
            "/a%20b|/a b",
            "/a%3Bb/c|/a;b/c",
            "/%2e%2e/internal|/internal",
            "/x/%2E%2E/internal|/internal",
            "/x/%2e/y|/x/y",
            "/x/.%2e/internal|/internal",
            "/x%2F..%2Finternal|/internal"})
    void segmentsArePercentDecoded(String uri, String expected) {
        assertEquals(expected, path(uri));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "/a%252Fb|/a%2Fb",
            "/%2525|/%25",
            "/a%25|/a%",
            "/%252e%252e/x|/%2e%2e/x"})
    void percentIsDecodedOnceOnly(String uri, String expected) {
        assertEquals(expected, path(uri));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "/a%zzb|/a%zzb",
            "/a%|/a%",
            "/a%2|/a%2",
            "/a%2/b|/a%2/b",
            "/a%g1|/a%g1",
            "/%%41|/%A",
            "/a%\u0661\u0661|/a%\u0661\u0661"})
    void invalidEscapesStayLiteral(String uri, String expected) {
        assertEquals(expected, path(uri));
    }

    @Test
    void invalidUtf8BecomesReplacementCharacters() {
        assertEquals("/a\uFFFD", path("/a%FF"));
        assertEquals("/a\uFFFD/b", path("/a%C3%2Fb"), "an encoded slash still splits after a broken sequence");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "\\api\\x|/api/x",
            "/api\\..\\internal|/internal",
            "//api///x|/api/x",
            "/api//|/api",
            "/x/../internal/a|/internal/a",
            "/x/./y|/x/y",
            "/../../etc/passwd|/etc/passwd",
            "/a/b/c/../../d|/a/d",
            "/a/..|/",
            "/..|/",
            "/.|/",
            "/a/.|/a",
            "/a/b/..|/a"})
    void slashesAndDotSegmentsAreResolved(String uri, String expected) {
        assertEquals(expected, path(uri));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "/api/|/api",
            "/api|/api",
            "/api/x/|/api/x",
            "/|/",
            "//|/"})
    void trailingSlashIsDropped(String uri, String expected) {
        assertEquals(expected, path(uri));
    }

    @Test
    void resultAlwaysStartsWithASlash() {
        assertEquals("/api/x", path("api/x"));
        assertEquals("/", path(""));
        assertEquals("/", path(null));
        assertEquals("/", RequestPath.normalize(null, null));
        assertEquals("/", RequestPath.normalize("", "/app"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "/app/api/x|/app|/api/x",
            "/app|/app|/",
            "/app/|/app|/",
            "/app;jsessionid=1/api|/app|/api",
            "/%61pp/api|/app|/api",
            "/app/api|/%61pp|/api",
            "//app//api|/app|/api",
            "/app/api|/app/|/api",
            "/application/x|/app|/application/x",
            "/other/api|/app|/other/api",
            "/app/../internal|/app|/internal",
            "/shop/v2/api|/shop/v2|/api",
            "/shop/api|/shop/v2|/shop/api",
            "/api/x|/|/api/x"})
    void contextPathIsStrippedWhenThePathStartsWithIt(String uri, String context, String expected) {
        assertEquals(expected, RequestPath.normalize(uri, context));
    }

    @Test
    void nullContextMeansRoot() {
        assertEquals("/api/x", RequestPath.normalize("/api/x", null));
    }

    @Test
    void longPathsAreNormalisedWhole() {
        String longPath = "/api/" + "a/".repeat(10_000);
        assertEquals("/api" + "/a".repeat(10_000), assertDoesNotThrow(() -> path(longPath)));

        String oneSegment = "/" + "x".repeat(100_000);
        assertEquals(oneSegment, path(oneSegment));

        String encoded = "/" + "%41".repeat(50_000);
        assertEquals("/" + "A".repeat(50_000), path(encoded));

        String dots = "/x" + "/..".repeat(50_000) + "/internal";
        assertEquals("/internal", path(dots), "the whole URI is read, as the container resolves it");
    }

    /**
     * What a rule's pattern depends on may come after any number of characters the client chose:
     * only the first 8192 characters of the path were once kept, so these matched neither
     * pattern, and the requests were neither counted nor limited.
     */
    @Test
    void aSegmentPastLongOnesStillDecidesTheMatch() {
        String reset = path("/api/users/" + "a".repeat(8_300) + "/reset");
        assertEquals("/api/users/" + "a".repeat(8_300) + "/reset", reset);
        assertTrue(HttpMatch.of(List.of("/api/users/*/reset"), List.of()).matches("GET", reset));
        assertFalse(HttpMatch.of(List.of("/api/users/*/reset"), List.of()).matches("GET", reset + "x"));

        String domain = RequestPath.normalize("/ctx/api/domains/" + "a".repeat(8_300) + ".com", "/ctx");
        assertTrue(HttpMatch.of(List.of("/api/domains/*.com"), List.of()).matches("GET", domain));

        String deep = path("/api/" + "s/".repeat(20_000) + "export");
        assertTrue(HttpMatch.of(List.of("/api/**/export"), List.of()).matches("GET", deep));
    }

    /**
     * Padding before the path that matters, as long as the container lets through: the path is
     * what the container serves. Only the first 8192 characters were once read, so these were
     * {@code /}, and passed a rule for {@code /admin/export}.
     */
    @Test
    void paddingBeforeThePathDoesNotHideIt() {
        assertEquals("/admin/export", path("/" + "/".repeat(8_300) + "admin/export"));
        assertEquals("/admin/export", path("/" + "./".repeat(5_000) + "admin/export"));
        assertEquals("/admin/export", path("/" + "%2F".repeat(5_000) + "admin/export"));
        assertEquals("/admin/export", path("/a/" + "b/".repeat(9_000) + "../".repeat(9_000) + "../admin/export"));
        assertEquals("/s".repeat(20_000) + "/end", path("/" + "s/".repeat(20_000) + "end"));
    }

    @Test
    void neverThrowsOnArbitraryInput() {
        Random random = new Random(42);
        String alphabet = "/\\%;?#.azAZ09\u00e9\u0000\uD800 ";
        for (int n = 0; n < 20_000; n++) {
            StringBuilder uri = new StringBuilder();
            int length = random.nextInt(40);
            for (int i = 0; i < length; i++) {
                uri.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            String normalized = assertDoesNotThrow(() -> RequestPath.normalize(uri.toString(), "/a"));
            assertTrue(normalized.startsWith("/"), normalized);
            assertTrue(normalized.equals("/") || !normalized.endsWith("/"), normalized);
            assertTrue(!normalized.contains("//"), normalized);
        }
    }

    @Test
    void normalisingIsIdempotentForPathsWithoutEscapes() {
        for (String uri : List.of("/a/../b/./c//d/", "\\x\\y;p=1/..", "/api;j=1/x/")) {
            String once = path(uri);
            assertEquals(once, path(once));
        }
    }

    @Test
    void tricksStillMatchTheRuleTheyTryToDodge() {
        HttpMatch internal = HttpMatch.of(List.of("/internal/**"), List.of());
        for (String trick : List.of("/x/../internal/a", "/x/..;/internal/a", "/%69nternal/a", "//internal//a",
                "\\internal\\a", "/internal;x=1/a", "/x%2F..%2Finternal/a", "/./internal/./a", "/internal/a/",
                "/app/internal/a")) {
            assertTrue(internal.matches("GET", RequestPath.normalize(trick, "/app")), trick);
        }
        HttpMatch api = HttpMatch.of(List.of("/api/**"), List.of());
        assertTrue(api.matches("GET", path("/api/")));
        assertTrue(api.matches("GET", path("/api")));
        assertTrue(api.matches("GET", path("/api%2Fsecret")));
    }

    /**
     * The shortcut for URIs that are normal already gives what the full normalisation gives, for
     * random URIs and context paths over an alphabet of the characters the normalisation treats
     * specially.
     */
    @Test
    void theShortcutAgreesWithTheFullNormalisation() {
        Random random = new Random(7);
        String[] pieces = {"/", "/", "/", "a", "api", "ctx", ".", "..", "%2F", "%41", ";p", "?q", "#f", "\\", "/.x", "ctxx"};
        String[] contexts = {"", null, "/ctx", "/c", "/ctx/", "/", "/%63tx", "/ctx;x"};
        int shortcuts = 0;
        for (int i = 0; i < 50_000; i++) {
            StringBuilder uri = new StringBuilder();
            int length = random.nextInt(7);
            for (int p = 0; p < length; p++) {
                uri.append(pieces[random.nextInt(pieces.length)]);
            }
            String context = contexts[random.nextInt(contexts.length)];
            String raw = uri.toString();
            assertEquals(RequestPath.normalizeSlowly(raw, context), RequestPath.normalize(raw, context),
                    raw + " in context " + context);
            shortcuts += RequestPath.isNormal(raw) ? 1 : 0;
        }
        assertTrue(shortcuts > 1000, "the shortcut was taken " + shortcuts + " times");
    }

    /** The routed path: what the container mapped, its empty segments dropped, null when the normalised path says it all. */
    @Test
    void theRoutedPathIsTheMappedPathWithoutEmptySegments() {
        org.junit.jupiter.api.Assertions.assertNull(RequestPath.routed("/api/users/", null, "/api/users"));
        org.junit.jupiter.api.Assertions.assertNull(RequestPath.routed("/api/users", "/", "/api/users"));
        org.junit.jupiter.api.Assertions.assertNull(RequestPath.routed("", "/api//users/", "/api/users"));
        org.junit.jupiter.api.Assertions.assertNull(RequestPath.routed("/", null, "/"));
        org.junit.jupiter.api.Assertions.assertNull(RequestPath.routed("", null, "/"));
        assertEquals("/api/users/u1/../..", RequestPath.routed("/api/users", "/u1/../..", "/"));
        assertEquals("/api/domains/a%2Fb", RequestPath.routed("/api/domains", "/a%2Fb", "/api/domains/a/b"));
        assertEquals("/a/b", RequestPath.routed("a", "//b//", "/x"));
        assertEquals("/index.html", RequestPath.routed("/index.html", null, "/"));
    }

    /**
     * The path with its dot segments kept, as Spring MVC routes by it: {@code /api/reports/..}
     * reached the handler of {@code /api/reports/{user}} with the user {@code ..} (a black-box
     * review, on Tomcat and Jetty). Null when the URI holds no dot segment, or keeping them changes
     * nothing.
     */
    @Test
    void theLiteralPathKeepsDotSegmentsHoweverSpelt() {
        assertEquals("/api/reports/..", RequestPath.literal("/api/reports/..", "", "/api"));
        assertEquals("/api/reports/.", RequestPath.literal("/api/reports/.", null, "/api/reports"));
        assertEquals("/api/reports/.", RequestPath.literal("/api/reports/%2e", "", "/api/reports"));
        assertEquals("/api/reports/..", RequestPath.literal("/api/reports/%2E%2E", "", "/api"));
        assertEquals("/api/reports/..", RequestPath.literal("/api/reports/.%2e", "", "/api"));
        assertEquals("/api/reports/.", RequestPath.literal("/api/reports/%2e;x", "", "/api/reports"));
        assertEquals("/api/reports/..", RequestPath.literal("/api/reports/..;jsessionid=1?q=..", "", "/api"));
        assertEquals("/a/../b", RequestPath.literal("//a/..//b/", "", "/b"));
        assertEquals("/api/reports/..", RequestPath.literal("/shop/api/reports/..", "/shop", "/api"));
        assertEquals("/api/reports/..", RequestPath.literal("/sh%6Fp/api/reports/..", "/shop", "/api"));
        org.junit.jupiter.api.Assertions.assertNull(RequestPath.literal("/api/reports/bob", "", "/api/reports/bob"));
        org.junit.jupiter.api.Assertions.assertNull(RequestPath.literal("/api/reports/bob.csv", "", "/api/reports/bob.csv"));
        org.junit.jupiter.api.Assertions.assertNull(RequestPath.literal("/api/reports/bob/", "", "/api/reports/bob"));
        org.junit.jupiter.api.Assertions.assertNull(RequestPath.literal("/api/%62ob", "", "/api/bob"));
        org.junit.jupiter.api.Assertions.assertNull(RequestPath.literal(null, "", "/"));
        org.junit.jupiter.api.Assertions.assertNull(RequestPath.literal("/.well-known/x", "", "/.well-known/x"));
    }
}
