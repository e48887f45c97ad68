package dev.ratelimit.config;

import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

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
     * wildcard is a final {@code /**}, the regular expression otherwise. {@code HttpMatchTest}
     * checks the first two against the expression.
     */
    static PathTest test(String path) {
        Pattern regex = compilePath(path);
        int star = path.indexOf('*');
        if (star < 0) {
            return path::equals;
        }
        if (path.endsWith("/**") && star == path.length() - 2) {
            String prefix = path.substring(0, path.length() - 3);
            String withSlash = prefix + "/";
            return candidate -> candidate.startsWith(withSlash) || candidate.equals(prefix);
        }
        return candidate -> regex.matcher(candidate).matches();
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
                throw new IllegalArgumentException("invalid HTTP method '" + method
                        + "'; expected a method name such as GET or POST");
            }
            methodSet.add(method.toUpperCase(Locale.ROOT));
        }
        return new HttpMatch(List.copyOf(paths), Collections.unmodifiableSet(methodSet), compiled);
    }

    /**
     * Checks and compiles one path pattern.
     *
     * @throws IllegalArgumentException with a message for the user
     */
    static Pattern compilePath(String path) {
        if (path == null || !path.startsWith("/")) {
            throw new IllegalArgumentException("invalid path '" + path + "': a path pattern must start with '/'");
        }
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c <= ' ' || c == 0x7F || c == '?' || c == '#') {
                throw new IllegalArgumentException("invalid path '" + path
                        + "': a path pattern matches the path alone, without spaces, control characters,"
                        + " a query (?) or a fragment (#)");
            }
        }
        String unmatchable = unmatchable(path);
        if (unmatchable != null) {
            throw new IllegalArgumentException("invalid path '" + path + "': " + unmatchable
                    + "; a request's path is normalised before it is matched, so this pattern would never match");
        }
        if (path.equals("/")) {
            return Pattern.compile("/");
        }
        StringBuilder regex = new StringBuilder();
        for (String segment : path.substring(1).split("/", -1)) {
            if (segment.equals("**")) {
                regex.append("(?:/[^/]*)*");
                continue;
            }
            if (segment.contains("**")) {
                throw new IllegalArgumentException("invalid path '" + path
                        + "': '**' must be a whole segment, as in /api/**; use '*' within a segment");
            }
            regex.append('/');
            int start = 0;
            for (int star = segment.indexOf('*'); star >= 0; star = segment.indexOf('*', start)) {
                regex.append(quote(segment.substring(start, star))).append("[^/]*");
                start = star + 1;
            }
            regex.append(quote(segment.substring(start)));
        }
        return Pattern.compile(regex.toString());
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
                return "it has a '" + segment + "' segment, and normalised paths have them resolved";
            }
            if (segment.indexOf(';') >= 0) {
                return "it has a ';', and path parameters are cut from a request's path";
            }
        }
        for (int i = path.indexOf('%'); i >= 0; i = path.indexOf('%', i + 1)) {
            if (i + 2 < path.length() && isHex(path.charAt(i + 1)) && isHex(path.charAt(i + 2))) {
                return "it has a percent-escape (" + path.substring(i, i + 3) + "), and requests are matched"
                        + " decoded: write the character itself";
            }
        }
        return null;
    }

    private static boolean isHex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }

    private static String quote(String literal) {
        return literal.isEmpty() ? "" : Pattern.quote(literal);
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
