package dev.ratelimit.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.regex.Pattern;
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

    /**
     * A space, '#', '%', ';', '?', '{' or '}' a request sent encoded is in its decoded path: the
     * pattern writes it escaped, since written as it is it means something else. Every way to
     * match {@code /files/a;b} exactly was refused, some with a message that was not true ("would
     * never match"), and the wildcard was the only way (the review of the HTTP path, thirty-fifth
     * round).
     */
    @Test
    void charactersThatCannotBeWrittenAsTheyAreAreWrittenEscaped() {
        assertTrue(paths("/files/a%3Bb").matches("GET", "/files/a;b"));
        assertTrue(paths("/files/a%3bb").matches("GET", "/files/a;b"), "either case");
        assertTrue(paths("/files/a%20b").matches("GET", "/files/a b"));
        assertTrue(paths("/files/a%3Fb").matches("GET", "/files/a?b"));
        assertTrue(paths("/files/a%23b").matches("GET", "/files/a#b"));
        assertTrue(paths("/files/a%25b").matches("GET", "/files/a%b"));
        assertTrue(paths("/files/%7Bid%7D").matches("GET", "/files/{id}"));
        assertFalse(paths("/files/a%3Bb").matches("GET", "/files/a%3Bb"), "the escape is not matched as text");
        assertTrue(paths("/files/*%3B*/**").matches("GET", "/files/x;y/z"), "in a wildcard pattern too");
        assertTrue(paths("/files/a%b").matches("GET", "/files/a%b"), "a '%' not followed by two hex digits is itself");
        assertTrue(paths("/files/%4Gb").matches("GET", "/files/%4Gb"));
        assertEquals(List.of("/files/a%3Bb"), paths("/files/a%3Bb").paths(), "shown as written");
        // each as a request sent it: the pattern matches the path the request is matched by
        for (String written : List.of("/files/a%3Bb", "/files/a%20b", "/files/a%3Fb", "/files/a%23b", "/files/a%25b",
                "/files/%7Bid%7D")) {
            String requested = dev.ratelimit.http.RequestPath.normalize(written, "");
            assertTrue(paths(written).matches("GET", requested), written + " against the request's path " + requested);
        }
        // any other escape is still refused: the character is written as it is
        IllegalArgumentException letter = assertThrows(IllegalArgumentException.class, () -> paths("/files/%41"));
        assertTrue(letter.getMessage().contains("write the character itself (only a space"), letter.getMessage());
        // and the messages say how to write the character
        IllegalArgumentException semicolon = assertThrows(IllegalArgumentException.class, () -> paths("/files/a;b"));
        assertTrue(semicolon.getMessage().contains("a ';' the request sent encoded is written %3B"), semicolon.getMessage());
        IllegalArgumentException space = assertThrows(IllegalArgumentException.class, () -> paths("/files/a b"));
        assertTrue(space.getMessage().contains("written %20, %3F or %23"), space.getMessage());
    }

    /** Spring's path variables are not patterns here: taken literally, the rule never applied, without a word. */
    @ParameterizedTest
    @ValueSource(strings = {"/users/{id}", "/e2/{id:[0-9]+}", "/a/{x}/**", "/a/b}"})
    void refusesPathVariables(String path) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> paths(path));
        assertTrue(e.getMessage().contains("patterns have no path variables ({id}): write * for one segment"),
                e.getMessage());
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
     * Every test (equality, prefix, glob) agrees with a regular expression written from the
     * documented rules, on paths made from a small alphabet chosen to hit the edges: shared
     * prefixes, dots, stars, nesting, empty and trailing segments (which normalised paths never
     * have, but the tests must not differ on them either).
     */
    @Test
    void everyTestAgreesWithTheRegularExpression() {
        Random random = new Random(6);
        String[] words = {"api", "ap", "apix", "a", "v1", "x.y", "**", "*", "internal", ".", "", "ab", "b.a"};
        List<String> patterns = List.of("/", "/**", "/api", "/api/**", "/api/v1/**", "/ap/**", "/a/x.y",
                "/internal/**", "/api/v1", "/x.y/**", "/*", "/a*", "/*a", "/a*b", "/*.*", "/**/a", "/**/*.y",
                "/api/*/v1", "/api/**/v1/**", "/**/a/**/b", "/*/**", "/**/**", "/a*a*a", "/*x*/**/*.a",
                "/api/*", "/**/api/*");
        for (int i = 0; i < 40_000; i++) {
            StringBuilder path = new StringBuilder();
            int segments = random.nextInt(6);
            for (int s = 0; s < segments; s++) {
                path.append('/').append(words[random.nextInt(words.length)]);
            }
            String candidate = path.length() == 0 ? "/" : path.toString();
            for (String pattern : patterns) {
                assertEquals(regex(pattern).matcher(candidate).matches(), HttpMatch.test(pattern).matches(candidate),
                        pattern + " against " + candidate);
            }
        }
    }

    /** The rules of the class comment as a regular expression: the reference the tests agree with. */
    private static Pattern regex(String pattern) {
        if (pattern.equals("/")) {
            return Pattern.compile("/");
        }
        StringBuilder regex = new StringBuilder();
        for (String segment : pattern.substring(1).split("/", -1)) {
            if (segment.equals("**")) {
                regex.append("(?:/[^/]*)*");
                continue;
            }
            regex.append('/');
            int start = 0;
            for (int star = segment.indexOf('*'); star >= 0; star = segment.indexOf('*', start)) {
                regex.append(Pattern.quote(segment.substring(start, star))).append("[^/]*");
                start = star + 1;
            }
            regex.append(Pattern.quote(segment.substring(start)));
        }
        return Pattern.compile(regex.toString());
    }

    /**
     * A path built to fail a pattern with several stars in one segment is answered at once. With
     * a backtracking regular expression, {@code [^/]*-[^/]*-[^/]*\.csv} against 8,000 dashes
     * took of the order of 8,000 cubed steps; a client could hold request threads with it.
     */
    @Test
    void aPathBuiltToFailManyStarsIsAnsweredAtOnce() {
        HttpMatch match = paths("/r/*-*-*.csv", "/**/a/**/b/**/c");
        String dashes = "/r/" + "-".repeat(8_000);
        String segments = "/a/b".repeat(2_000);
        boolean[] answers = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> new boolean[] {
            match.matches("GET", dashes), match.matches("GET", segments), match.matches("GET", "/r/a-b-c.csv")});
        assertFalse(answers[0]);
        assertFalse(answers[1]);
        assertTrue(answers[2]);
    }
}
