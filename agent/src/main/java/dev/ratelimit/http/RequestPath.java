package dev.ratelimit.http;

import java.nio.charset.StandardCharsets;

/**
 * The path that HTTP rules match against, normalised so that spelling a URI differently cannot
 * dodge a rule.
 *
 * <p>Steps, in order: cut the query and fragment; split at {@code /} and {@code \}; drop each
 * segment's path parameters ({@code ;...}, as containers do before decoding, so {@code ..;} is
 * {@code ..}); percent-decode each segment once as UTF-8, where a decoded {@code /} or {@code \}
 * splits the segment again ({@code /api%2Fsecret} is {@code /api/secret}); drop empty and
 * {@code .} segments and resolve {@code ..}, never above the root; drop the context path's
 * segments when the path starts with them, the context path being normalised the same way so raw
 * and decoded spellings both match.
 *
 * <p>The result starts with {@code /} and never ends with one, except the root {@code /} itself:
 * {@code /api/} and {@code /api} are the same path here, and {@code /api/**} matches both. Case is
 * kept, since servlet paths are case-sensitive. Invalid escapes such as {@code %zz} stay literal;
 * bytes that are not valid UTF-8 become U+FFFD.
 *
 * <p>The whole URI is read, once, in linear time, and the whole normalised path is kept: the
 * container's limit on the request line bounds it. A URI padded with thousands of {@code /} or
 * {@code ./} before {@code /admin} is {@code /admin}, as the container resolves it; and a segment
 * that a rule's pattern depends on counts wherever it is, however long the segments before it.
 * Keeping only the first 8192 characters once let {@code /api/users/<8300 characters>/reset}
 * past a rule for <code>/api/users/&#42;/reset</code> on a container that accepts long request lines
 * (Undertow by default, Tomcat and Jetty when told to). Never throws.
 */
public final class RequestPath {

    private RequestPath() {
    }

    /**
     * @param rawRequestUri the request URI as sent (the servlet's {@code getRequestURI()}), null
     *     allowed
     * @param rawContextPath the servlet's {@code getContextPath()}; null or empty for the root
     * @return the normalised path within the application, {@code /} at least
     */
    public static String normalize(String rawRequestUri, String rawContextPath) {
        // Nearly every request URI is normal already: then the work below would give it back
        // unchanged (less the context path), so skip it.
        if (isNormal(rawRequestUri)) {
            if (rawContextPath == null || rawContextPath.isEmpty()) {
                return rawRequestUri;
            }
            if (isNormal(rawContextPath) && !rawContextPath.equals("/")) {
                if (!rawRequestUri.startsWith(rawContextPath)) {
                    return rawRequestUri;
                }
                int length = rawContextPath.length();
                if (rawRequestUri.length() == length) {
                    return "/";
                }
                if (rawRequestUri.charAt(length) == '/') {
                    return rawRequestUri.substring(length);
                }
                return rawRequestUri;
            }
        }
        return normalizeSlowly(rawRequestUri, rawContextPath);
    }

    /**
     * The path within the application the container mapped the request by,
     * {@code servletPath + pathInfo} as the container decoded them, when it differs from
     * {@code normalized}; null when it is the same or the container gave none. Nothing is
     * resolved or decoded again: this is what the container's own mapping saw. Only its empty
     * segments are dropped (a trailing {@code /}, a {@code //}), as in the normalised path: rules
     * are written for paths without them, and a {@code *} matched the empty segment of
     * {@code /api/users/} (a servlet at {@code /} keeps the slash), counting a request for
     * {@code /api/users} under a rule for {@code /api/users/*}. Never throws.
     */
    public static String routed(String servletPath, String pathInfo, String normalized) {
        String servlet = servletPath == null ? "" : servletPath;
        String info = pathInfo == null ? "" : pathInfo;
        if (servlet.isEmpty() && info.isEmpty()) {
            return null;
        }
        if (normalized != null && normalized.length() == servlet.length() + info.length()
                && normalized.startsWith(servlet) && normalized.endsWith(info)) {
            return null;
        }
        String routed = withoutEmptySegments(servlet.concat(info));
        return routed.equals(normalized) ? null : routed;
    }

    /**
     * The path with its dot segments kept as segments, when the URI has one and this differs from
     * {@code normalized}; null otherwise. Steps as {@link #normalize}, save that {@code .} and
     * {@code ..} (however spelt: {@code %2e}, {@code .;x}) are neither dropped nor resolved.
     * Spring MVC routes by the URI so (its path patterns and its Ant matcher alike, on Tomcat and
     * Jetty, whose own mapping resolves them): {@code /api/reports/..} reached the handler of
     * {@code /api/reports/{user}} with the user {@code ..}, while the resolved path,
     * {@code /api}, is not under a rule for {@code /api/reports/*}. Never throws.
     */
    public static String literal(String rawRequestUri, String rawContextPath, String normalized) {
        if (rawRequestUri == null || isNormal(rawRequestUri) || !mayHoldDotSegment(rawRequestUri)) {
            return null;
        }
        String path = segments(rawRequestUri, true);
        String context = segments(rawContextPath, true);
        if (!context.isEmpty() && path.startsWith(context)
                && (path.length() == context.length() || path.charAt(context.length()) == '/')) {
            path = path.substring(context.length());
        }
        if (path.isEmpty()) {
            path = "/";
        }
        return path.equals(normalized) ? null : path;
    }

    /** Whether a segment of {@code uri} could decode to a dot segment: it holds a {@code .} or an escape. */
    private static boolean mayHoldDotSegment(String uri) {
        return uri.indexOf('.') >= 0 || uri.indexOf('%') >= 0;
    }

    /** {@code path} with a leading {@code /}, and without empty segments ({@code /} for none). */
    private static String withoutEmptySegments(String path) {
        int length = path.length();
        boolean clean = length > 0 && path.charAt(0) == '/' && (length == 1 || path.charAt(length - 1) != '/')
                && path.indexOf("//") < 0;
        if (clean) {
            return path;
        }
        StringBuilder kept = new StringBuilder(length + 1);
        for (int i = 0; i < length; i++) {
            char c = path.charAt(i);
            if (c != '/') {
                if (i == 0 || path.charAt(i - 1) == '/') {
                    kept.append('/'); // a segment begins
                }
                kept.append(c);
            }
        }
        return kept.length() == 0 ? "/" : kept.toString();
    }

    /**
     * Whether {@code uri} is its own normal form: it starts with {@code /}, and has no query,
     * fragment, backslash, path parameter, escape, empty segment, trailing {@code /} (unless it is
     * {@code /}) or segment starting with {@code .}.
     */
    static boolean isNormal(String uri) {
        if (uri == null || uri.isEmpty() || uri.charAt(0) != '/') {
            return false;
        }
        if (uri.length() == 1) {
            return true;
        }
        char previous = '/';
        for (int i = 1; i < uri.length(); i++) {
            char c = uri.charAt(i);
            if (c == '?' || c == '#' || c == '\\' || c == ';' || c == '%'
                    || previous == '/' && (c == '/' || c == '.')) {
                return false;
            }
            previous = c;
        }
        return previous != '/';
    }

    /** The normal form, worked out step by step (see the class comment). */
    static String normalizeSlowly(String rawRequestUri, String rawContextPath) {
        String path = segments(rawRequestUri, false);
        String context = segments(rawContextPath, false);
        // the context path's segments, when the path starts with them (no segment holds a '/')
        if (!context.isEmpty() && path.startsWith(context)
                && (path.length() == context.length() || path.charAt(context.length()) == '/')) {
            path = path.substring(context.length());
        }
        return path.isEmpty() ? "/" : path;
    }

    /**
     * The decoded, resolved segments of {@code raw}, each after a {@code /}, in one string; empty
     * for none. Built in one buffer, a {@code ..} cutting it back to where the segment before
     * began: linear in the URI's length, with no string per segment (a 1 MB URI of short
     * segments once cost up to 0.9 s and 35 MB). With {@code keepDots}, {@code .} and {@code ..}
     * are segments like any other.
     */
    private static String segments(String raw, boolean keepDots) {
        if (raw == null) {
            return "";
        }
        int end = raw.length();
        for (int i = 0; i < end; i++) {
            char c = raw.charAt(i);
            if (c == '?' || c == '#') {
                end = i;
                break;
            }
        }
        Resolved resolved = new Resolved(end, keepDots);
        int start = 0;
        while (start <= end) {
            int separator = start;
            int segmentEnd = -1;
            boolean escaped = false;
            for (; separator < end && !isSeparator(raw.charAt(separator)); separator++) {
                char c = raw.charAt(separator);
                if (segmentEnd < 0 && c == ';') {
                    segmentEnd = separator;
                }
                if (segmentEnd < 0 && c == '%') {
                    escaped = true;
                }
            }
            if (segmentEnd < 0) {
                segmentEnd = separator;
            }
            if (!escaped) {
                resolved.add(raw, start, segmentEnd);
            } else {
                // a decoded '/' or '\' splits the segment again
                StringBuilder decoded = resolved.decoded;
                decoded.setLength(0);
                decode(raw, start, segmentEnd, decoded, resolved);
                int pieceStart = 0;
                for (int i = 0; i <= decoded.length(); i++) {
                    if (i == decoded.length() || isSeparator(decoded.charAt(i))) {
                        resolved.add(decoded, pieceStart, i);
                        pieceStart = i + 1;
                    }
                }
            }
            start = separator + 1;
        }
        return resolved.text.toString();
    }

    private static boolean isSeparator(char c) {
        return c == '/' || c == '\\';
    }

    /** Resolved segments: empty and {@code .} ones dropped, a {@code ..} removing the one before it (unless dots are kept). */
    private static final class Resolved {
        final StringBuilder text;
        /** Scratch space for a segment's decoded text. */
        final StringBuilder decoded = new StringBuilder();
        /** Where each segment kept begins in {@code text}. */
        private int[] starts = new int[16];
        private int depth;
        /** Scratch space for a run of escaped bytes, reused from segment to segment. */
        private byte[] bytes = new byte[0];
        private final boolean keepDots;

        byte[] bytes(int atLeast) {
            if (bytes.length < atLeast) {
                bytes = new byte[Math.max(atLeast, bytes.length * 2)];
            }
            return bytes;
        }

        Resolved(int capacity, boolean keepDots) {
            text = new StringBuilder(Math.min(capacity + 1, 1 << 16));
            this.keepDots = keepDots;
        }

        void add(CharSequence source, int from, int to) {
            int length = to - from;
            if (length == 0 || !keepDots && length == 1 && source.charAt(from) == '.') {
                return;
            }
            if (!keepDots && length == 2 && source.charAt(from) == '.' && source.charAt(from + 1) == '.') {
                if (depth > 0) {
                    text.setLength(starts[--depth]);
                }
                return;
            }
            if (depth == starts.length) {
                starts = java.util.Arrays.copyOf(starts, depth * 2);
            }
            starts[depth++] = text.length();
            text.append('/').append(source, from, to);
        }
    }

    /**
     * Appends {@code raw[from, to)} to {@code text} with each valid {@code %XX} decoded once; runs
     * of escapes are read as UTF-8.
     */
    private static void decode(String raw, int from, int to, StringBuilder text, Resolved scratch) {
        byte[] bytes = null;
        int count = 0;
        for (int i = from; i < to; i++) {
            char c = raw.charAt(i);
            int high = c == '%' && i + 2 < to ? hexValue(raw.charAt(i + 1)) : -1;
            int low = high >= 0 ? hexValue(raw.charAt(i + 2)) : -1;
            if (low >= 0) {
                int b = high << 4 | low;
                i += 2;
                if (b < 0x80 && count == 0) {
                    // ASCII on its own: no decoder needed
                    text.append((char) b);
                    continue;
                }
                if (bytes == null) {
                    bytes = scratch.bytes((to - from) / 3);
                }
                bytes[count++] = (byte) b;
                continue;
            }
            if (count > 0) {
                text.append(new String(bytes, 0, count, StandardCharsets.UTF_8));
                count = 0;
            }
            text.append(c);
        }
        if (count > 0) {
            text.append(new String(bytes, 0, count, StandardCharsets.UTF_8));
        }
    }

    /** 0..15 for an ASCII hex digit, else -1 ({@link Character#digit} would also accept non-ASCII digits). */
    private static int hexValue(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }
}
