package dev.ratelimit.http;

import dev.ratelimit.config.ExemptConfig;
import dev.ratelimit.config.TokenSource;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.List;

/**
 * Checks the internal token a request presents in the exempt header.
 *
 * <p>Exactly one header value, trimmed of spaces and tabs, whose SHA-256 equals a configured
 * digest is {@link Verdict#VALID}. Everything else that is present is {@link Verdict#FORGED}:
 * empty, wrong, truncated or case-changed values, values with control characters, values over
 * {@value #MAX_VALUE_CHARS} characters (refused without hashing), comma-joined lists, and repeated
 * header lines even when one of them is valid, so repeating the header never widens what passes.
 *
 * <p>The presented value is hashed and compared with {@link MessageDigest#isEqual} against every
 * configured digest, without stopping at a match, so timing reveals neither the token nor which
 * one matched. The value is never logged or kept; the byte copy that is hashed is zeroed.
 *
 * <p>Thread-safe and immutable.
 */
public final class TokenVerifier {

    /** What a request's exempt header says about it. */
    public enum Verdict {
        /** No exempt header, or no exempt section configured: count the request as usual. */
        NONE,
        /** A configured token: do not count the request. */
        VALID,
        /** A header that is not a configured token: count the request and report it. */
        FORGED
    }

    /** Longer values are forged without being hashed. */
    public static final int MAX_VALUE_CHARS = ExemptConfig.MAX_TOKEN_CHARS;

    private final boolean enabled;
    private final byte[][] digests;

    /** Takes the digests once; a disabled exempt section makes every verdict {@link Verdict#NONE}. */
    public TokenVerifier(ExemptConfig exempt) {
        this.enabled = exempt.isEnabled();
        this.digests = exempt.digests().toArray(new byte[0][]);
    }

    /**
     * @param headerValues every value of the exempt header, one per header line, as sent; empty
     *     (or null) when the header is absent
     */
    public Verdict verify(List<String> headerValues) {
        if (!enabled || headerValues == null || headerValues.isEmpty()) {
            return Verdict.NONE;
        }
        if (headerValues.size() != 1) {
            return Verdict.FORGED;
        }
        String value = headerValues.get(0);
        if (value == null || value.length() > MAX_VALUE_CHARS) {
            return Verdict.FORGED;
        }
        int from = 0;
        int to = value.length();
        while (from < to && isOptionalWhitespace(value.charAt(from))) {
            from++;
        }
        while (to > from && isOptionalWhitespace(value.charAt(to - 1))) {
            to--;
        }
        if (from == to) {
            return Verdict.FORGED;
        }
        for (int i = from; i < to; i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c == 0x7F) {
                return Verdict.FORGED;
            }
        }
        byte[] presented = value.substring(from, to).getBytes(StandardCharsets.UTF_8);
        byte[] digest = TokenSource.sha256(presented);
        Arrays.fill(presented, (byte) 0);
        boolean match = false;
        for (byte[] accepted : digests) {
            match |= MessageDigest.isEqual(digest, accepted);
        }
        return match ? Verdict.VALID : Verdict.FORGED;
    }

    private static boolean isOptionalWhitespace(char c) {
        return c == ' ' || c == '\t';
    }
}
