package dev.ratelimit.config;

import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Which HTTP requests a rule applies to: Ant-style path patterns and, optionally, request methods.
 *
 * <p>{@code *} matches within one path segment ({@code /files/*.txt}); a {@code **} segment matches
 * any number of segments, none included ({@code /api/**} matches {@code /api} and
 * {@code /api/a/b}). The request path is expected to be normalised already.
 */
public final class HttpMatch {

    private final List<String> paths;
    private final Set<String> methods;
    /** The methods matched: those written, and HEAD with GET. */
    private final Set<String> matched;
    private final PathTest[] compiled;

    private HttpMatch(List<String> paths, Set<String> methods, PathTest[] compiled) {
        this.paths = paths;
        this.methods = methods;
        // a HEAD request runs the GET handler (HttpServlet.doHead, Spring's @GetMapping): a
        // limit on an expensive GET that HEAD walked around would limit nothing
        Set<String> matched = new LinkedHashSet<>(methods);
        if (methods.contains("GET")) {
            matched.add("HEAD");
        }
        this.matched = Set.copyOf(matched);
        this.compiled = compiled;
    }

    /** One compiled path pattern. */
    interface PathTest {
        boolean matches(String path);
    }

    /**
     * The cheapest test for a pattern, for normalised paths (no empty segment, no trailing
     * {@code /}): equality for a pattern without wildcards, a prefix test for one whose only
     * wildcard is a final {@code /**}, a {@link Glob} otherwise. {@code HttpMatchTest} checks
     * all three against a regular expression written from the rules above.
     *
     * @throws IllegalArgumentException with a message for the user
     */
    static PathTest test(String written) {
        checkPath(written);
        String path = decoded(written);
        int star = path.indexOf('*');
        if (star < 0) {
            return path::equals;
        }
        if (path.endsWith("/**") && star == path.length() - 2) {
            String prefix = path.substring(0, path.length() - 3);
            String withSlash = prefix + "/";
            return candidate -> candidate.startsWith(withSlash) || candidate.equals(prefix);
        }
        return new Glob(path);
    }

    /**
     * A pattern with wildcards, matched segment by segment without a regular expression. The
     * request's path is the client's to choose, up to the container's limit on the request line: a backtracking
     * expression with several {@code [^/]*} in one segment ({@code /r/*-*-*.csv}) took time of the
     * order of that segment's length to the power of the number of stars on a path built to fail
     * it, holding a request thread for hours. Here a {@code *} or a {@code **} is taken back one
     * character or one segment at a time, to the last one seen only, so a match takes at most the
     * pattern's length times the path's length steps.
     */
    static final class Glob implements PathTest {
        private final String[] segments;
        /** Which segments are {@code **}. */
        private final boolean[] anySegments;

        Glob(String pattern) {
            this.segments = pattern.substring(1).split("/", -1);
            this.anySegments = new boolean[segments.length];
            for (int i = 0; i < segments.length; i++) {
                anySegments[i] = segments[i].equals("**");
            }
        }

        @Override
        public boolean matches(String path) {
            int length = path.length();
            if (length == 0 || path.charAt(0) != '/') {
                // only a pattern of ** alone matches no segment at all
                return length == 0 && remainingAreAny(0);
            }
            int next = 0; // the next pattern segment
            int at = 0; // the '/' opening the next path segment, or the path's length at its end
            int anyAt = -1; // the last ** met: its pattern segment ...
            int anyTook = -1; // ... and where the path segments it takes end
            while (at < length) {
                if (next < segments.length && anySegments[next]) {
                    anyAt = next++;
                    anyTook = at;
                    continue;
                }
                int end = segmentEnd(path, at);
                if (next < segments.length && segmentMatches(segments[next], path, at + 1, end)) {
                    next++;
                    at = end;
                } else if (anyAt >= 0) {
                    // the last ** takes one more path segment, and the rest is tried after it
                    next = anyAt + 1;
                    anyTook = segmentEnd(path, anyTook);
                    at = anyTook;
                } else {
                    return false;
                }
            }
            return remainingAreAny(next);
        }

        private boolean remainingAreAny(int from) {
            for (int i = from; i < segments.length; i++) {
                if (!anySegments[i]) {
                    return false;
                }
            }
            return true;
        }

        private static int segmentEnd(String path, int slash) {
            int end = path.indexOf('/', slash + 1);
            return end < 0 ? path.length() : end;
        }

        /** Whether {@code path[from, to)}, one segment, matches {@code glob}, where {@code *} is any run of characters. */
        static boolean segmentMatches(String glob, String path, int from, int to) {
            int g = 0;
            int at = from;
            int star = -1; // the last * met in the glob ...
            int starTook = -1; // ... and where the characters it takes end
            while (at < to) {
                char c = g < glob.length() ? glob.charAt(g) : 0;
                if (c == '*') {
                    star = g++;
                    starTook = at;
                } else if (g < glob.length() && c == path.charAt(at)) {
                    g++;
                    at++;
                } else if (star >= 0) {
                    // the last * takes one more character, and the rest is tried after it
                    g = star + 1;
                    at = ++starTook;
                } else {
                    return false;
                }
            }
            while (g < glob.length() && glob.charAt(g) == '*') {
                g++;
            }
            return g == glob.length();
        }
    }

    /**
     * @param paths at least one Ant-style pattern, each starting with {@code /}
     * @param methods request methods (upper-cased here); empty for every method
     * @throws IllegalArgumentException with a message for the user
     */
    public static HttpMatch of(List<String> paths, List<String> methods) {
        if (paths.isEmpty()) {
            throw new IllegalArgumentException("give at least one path, such as /api/**");
        }
        PathTest[] compiled = new PathTest[paths.size()];
        for (int i = 0; i < compiled.length; i++) {
            compiled[i] = test(paths.get(i));
        }
        Set<String> methodSet = new LinkedHashSet<>();
        for (String method : methods) {
            if (!HttpTokens.isToken(method)) {
                throw new IllegalArgumentException("invalid HTTP method " + NodeReader.quoted(method)
                        + "; expected a method name such as GET or POST");
            }
            methodSet.add(method.toUpperCase(Locale.ROOT));
        }
        return new HttpMatch(List.copyOf(paths), Collections.unmodifiableSet(methodSet), compiled);
    }

    /**
     * Checks one path pattern.
     *
     * @throws IllegalArgumentException with a message for the user
     */
    static void checkPath(String path) {
        if (path == null || !path.startsWith("/")) {
            throw new IllegalArgumentException("invalid path " + NodeReader.quoted(path) + ": a path pattern must start with '/'");
        }
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c <= ' ' || c == 0x7F || c == '?' || c == '#') {
                throw new IllegalArgumentException("invalid path " + NodeReader.quoted(path)
                        + ": a path pattern matches the path alone, without spaces, control characters,"
                        + " a query (?) or a fragment (#); a space, '?' or '#' the request sent encoded is"
                        + " written %20, %3F or %23");
            }
            if (c == '{' || c == '}') {
                // Spring's {id}: taken literally, the rule never applied, without a word
                throw new IllegalArgumentException("invalid path " + NodeReader.quoted(path)
                        + ": patterns have no path variables ({id}): write * for one segment (/users/*),"
                        + " ** for any number; a '{' or '}' the request sent encoded is written %7B or %7D");
            }
        }
        String unmatchable = unmatchable(path);
        if (unmatchable != null) {
            throw new IllegalArgumentException("invalid path " + NodeReader.quoted(path) + ": " + unmatchable
                    + "; a request's path is normalised before it is matched, so this pattern would never match");
        }
        for (String segment : path.substring(1).split("/", -1)) {
            if (segment.contains("**") && !segment.equals("**")) {
                throw new IllegalArgumentException("invalid path " + NodeReader.quoted(path)
                        + ": '**' must be a whole segment, as in /api/**; use '*' within a segment");
            }
        }
    }

    /**
     * Why a pattern can never match a normalised path (see {@code RequestPath}), or null. A
     * pattern that cannot match would drop its rule's limit without a word.
     */
    private static String unmatchable(String path) {
        if (path.length() > 1 && path.endsWith("/")) {
            return "it ends with '/', and normalised paths never do (/api/ is /api): write /api, or /api/**"
                    + " for /api and everything under it";
        }
        if (path.contains("//")) {
            return "it has an empty segment ('//'), and normalised paths have none";
        }
        if (path.indexOf('\\') >= 0) {
            return "it has a '\\', which a normalised path reads as '/'";
        }
        for (String segment : path.substring(1).split("/", -1)) {
            if (segment.equals(".") || segment.equals("..")) {
                return "it has a " + NodeReader.quoted(segment) + " segment, and normalised paths have them resolved";
            }
            if (segment.indexOf(';') >= 0) {
                return "it has a ';', and path parameters (;jsessionid=...) are cut from a request's path;"
                        + " a ';' the request sent encoded is written %3B";
            }
        }
        for (int i = path.indexOf('%'); i >= 0; i = path.indexOf('%', i + 1)) {
            if (i + 2 < path.length() && isHex(path.charAt(i + 1)) && isHex(path.charAt(i + 2))
                    && escaped(path, i) < 0) {
                return "it has a percent-escape (" + path.substring(i, i + 3) + "), and requests are matched"
                        + " decoded: write the character itself (only a space, '#', '%', ';', '?', '{' and '}',"
                        + " which cannot be written as they are, are written %20, %23, %25, %3B, %3F, %7B and %7D)";
            }
        }
        return null;
    }

    /** The characters a pattern writes percent-escaped, since written as they are they mean something else. */
    private static final String ESCAPED = " #%;?{}";

    /**
     * The character of the percent-escape at {@code i} when it is one a pattern must write
     * escaped ({@link #ESCAPED}), or -1.
     */
    private static int escaped(String path, int i) {
        if (i + 2 >= path.length() || path.charAt(i) != '%') {
            return -1;
        }
        if (!isHex(path.charAt(i + 1)) || !isHex(path.charAt(i + 2))) {
            return -1; // Character.digit alone takes digits of other scripts too
        }
        int value = Character.digit(path.charAt(i + 1), 16) * 16 + Character.digit(path.charAt(i + 2), 16);
        return ESCAPED.indexOf(value) >= 0 ? value : -1;
    }

    /**
     * The pattern as matched: a request's path is matched decoded, so {@code %20 %23 %25 %3B %3F
     * %7B %7D} stand for their characters (a request for {@code /files/a%3Bb} has the path
     * {@code /files/a;b}). Other escapes are refused by {@link #checkPath}.
     */
    static String decoded(String written) {
        if (written.indexOf('%') < 0) {
            return written;
        }
        StringBuilder out = new StringBuilder(written.length());
        for (int i = 0; i < written.length(); i++) {
            int c = escaped(written, i);
            if (c >= 0) {
                out.append((char) c);
                i += 2;
            } else {
                out.append(written.charAt(i));
            }
        }
        return out.toString();
    }

    private static boolean isHex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }

    /** The path patterns as written. */
    public List<String> paths() {
        return paths;
    }

    /** The upper-case request methods as written (GET also matches HEAD); empty for every method. */
    public Set<String> methods() {
        return methods;
    }

    /** True when a request with this method and (normalised) path falls under the rule. */
    public boolean matches(String method, String path) {
        if (!methods.isEmpty() && !matched.contains(method)) {
            return false;
        }
        for (PathTest test : compiled) {
            if (test.matches(path)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof HttpMatch)) {
            return false;
        }
        HttpMatch that = (HttpMatch) other;
        return paths.equals(that.paths) && methods.equals(that.methods);
    }

    @Override
    public int hashCode() {
        return 31 * paths.hashCode() + methods.hashCode();
    }

    /** {@code http [GET, POST] /api/**}: methods when limited, then the paths. */
    @Override
    public String toString() {
        return "http " + (methods.isEmpty() ? "" : methods + " ") + String.join(", ", paths);
    }
}
