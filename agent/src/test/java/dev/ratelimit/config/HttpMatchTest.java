package dev.ratelimit.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class HttpMatchTest {

    static HttpMatch paths(String... paths) {
        return HttpMatch.of(List.of(paths), List.of());
    }

    @Test
    void doubleStarMatchesAnyNumberOfSegmentsIncludingNone() {
        HttpMatch api = paths("/api/**");
        assertTrue(api.matches("GET", "/api"));
        assertTrue(api.matches("GET", "/api/"));
        assertTrue(api.matches("GET", "/api/a"));
        assertTrue(api.matches("GET", "/api/a/b/c"));
        assertFalse(api.matches("GET", "/apix"));
        assertFalse(api.matches("GET", "/other/api"));

        HttpMatch middle = paths("/**/edit");
        assertTrue(middle.matches("GET", "/edit"));
        assertTrue(middle.matches("GET", "/a/b/edit"));
        assertFalse(middle.matches("GET", "/a/b/edit/x"));
        assertTrue(paths("/**").matches("GET", "/"));
        assertTrue(paths("/**").matches("GET", "/anything/at/all"));
    }

    @Test
    void starStaysWithinOneSegment() {
        HttpMatch one = paths("/users/*/orders");
        assertTrue(one.matches("GET", "/users/42/orders"));
        assertFalse(one.matches("GET", "/users/42/x/orders"));
        HttpMatch files = paths("/files/*.txt");
        assertTrue(files.matches("GET", "/files/a.txt"));
        assertFalse(files.matches("GET", "/files/a.txt.gz"));
        assertFalse(files.matches("GET", "/files/dir/a.txt"));
        assertFalse(files.matches("GET", "/files/aXtxt"), "the dot is literal");
    }

    @Test
    void exactPathsAndLists() {
        HttpMatch match = paths("/login", "/signup");
        assertTrue(match.matches("POST", "/login"));
        assertTrue(match.matches("POST", "/signup"));
        assertFalse(match.matches("POST", "/login/"));
        assertTrue(paths("/").matches("GET", "/"));
        assertFalse(paths("/").matches("GET", "/a"));
    }

    @Test
    void methodsAreUpperCasedAndFilter() {
        HttpMatch match = HttpMatch.of(List.of("/a"), List.of("get", "POST"));
        assertEquals(Set.of("GET", "POST"), match.methods());
        assertTrue(match.matches("GET", "/a"));
        assertTrue(match.matches("POST", "/a"));
        assertFalse(match.matches("DELETE", "/a"));
        assertTrue(paths("/a").matches("DELETE", "/a"), "no methods means every method");
        assertEquals("http [GET, POST] /a", match.toString());
        // HEAD runs the GET handler: a limit on GET that HEAD walked around would limit nothing
        assertTrue(match.matches("HEAD", "/a"));
        assertFalse(HttpMatch.of(List.of("/a"), List.of("POST")).matches("HEAD", "/a"));
    }

    /** Patterns no normalised request path can match: refused, not a limit dropped without a word. */
    @ParameterizedTest
    @ValueSource(strings = {"/login/", "/api//x", "/a/./b", "/a/../b", "/caf%C3%A9", "/api/h%65llo", "/a;jsessionid=1",
            "/a\\b", "/api/**/"})
    void refusesPathsNoRequestCanHave(String path) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> paths(path));
        assertTrue(e.getMessage().contains("would never match"), e.getMessage());
        // what a request spelled that way is matched as
        String normalised = dev.ratelimit.http.RequestPath.normalize(path, "");
        assertFalse(normalised.equals(path), path + " is normal");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "api", "*/x", "/a/**b", "/a/***", "/a b", "/a?x=1", "/a#frag", "/a\tb"})
    void refusesInvalidPaths(String path) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> paths(path));
        assertTrue(e.getMessage().contains("invalid path"), e.getMessage());
    }

    @Test
    void refusesInvalidMethodsAndNoPaths() {
        assertThrows(IllegalArgumentException.class, () -> HttpMatch.of(List.of("/a"), List.of("GE T")));
        assertThrows(IllegalArgumentException.class, () -> HttpMatch.of(List.of(), List.of()));
    }

    @Test
    void regexCharactersInPathsAreLiteral() {
        HttpMatch match = paths("/a+b/(x)/$");
        assertTrue(match.matches("GET", "/a+b/(x)/$"));
        assertFalse(match.matches("GET", "/aab/x/"));
    }

    /**
     * The shortcuts (equality, prefix) agree with the regular expression on normalised paths made
     * from a small alphabet chosen to hit the edges: shared prefixes, dots, stars, nesting.
     */
    @Test
    void shortcutsAgreeWithTheRegularExpression() {
        Random random = new Random(6);
        String[] words = {"api", "ap", "apix", "a", "v1", "x.y", "**", "*", "internal", "."};
        List<String> patterns = List.of("/", "/**", "/api", "/api/**", "/api/v1/**", "/ap/**", "/a/x.y",
                "/internal/**", "/api/v1", "/x.y/**");
        for (int i = 0; i < 20_000; i++) {
            StringBuilder path = new StringBuilder();
            int segments = random.nextInt(5);
            for (int s = 0; s < segments; s++) {
                path.append('/').append(words[random.nextInt(words.length)]);
            }
            String normalised = path.length() == 0 ? "/" : path.toString();
            for (String pattern : patterns) {
                assertEquals(HttpMatch.compilePath(pattern).matcher(normalised).matches(),
                        HttpMatch.test(pattern).matches(normalised), pattern + " against " + normalised);
            }
        }
    }
}
