package dev.ratelimit.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The internal tokens whose holders are never counted, and the request header that carries them.
 * Only digests are kept; compare a presented token's SHA-256 with {@link #digests()} using
 * {@link java.security.MessageDigest#isEqual}.
 */
public final class ExemptConfig {
    /**
     * The longest token: a longer header value is forged without being hashed, so a longer
     * configured token could never exempt its holder; the rule file refuses it.
     */
    public static final int MAX_TOKEN_CHARS = 4096;

    private static final ExemptConfig DISABLED = new ExemptConfig(null, List.of());

    private final String header;
    private final List<TokenSource> tokens;

    ExemptConfig(String header, List<TokenSource> tokens) {
        this.header = header;
        this.tokens = List.copyOf(tokens);
    }

    /** A run of letters and digits this long, holding both, is taken for a token pasted as the header's name. */
    static final int SECRET_LIKE_RUN = 20;

    /**
     * Why the header is not shown, when it looks like a token pasted as the header's name (see
     * {@link #looksLikeASecret}); else null. A warning, not an error: a header name may look so.
     */
    public String headerWarning() {
        return header != null && looksLikeASecret(header)
                ? "exempt.header looks like a token, not a header name (a run of " + SECRET_LIKE_RUN + " or more letters"
                        + " and digits, mixed), so it is not shown; if it is a token, put it under tokens only, and name"
                        + " the header (X-Internal-Token)"
                : null;
    }

    /**
     * Whether a header name holds a run of {@link #SECRET_LIKE_RUN} or more letters and digits with
     * both in it, as a random token (hex, base64) does: check does not print it (the review of the
     * thirty-eighth round). A few real names do too ({@code X-Oauth2AccessTokenHeader}): only
     * their display suffers.
     */
    static boolean looksLikeASecret(String header) {
        int run = 0;
        boolean letter = false;
        boolean digit = false;
        for (int i = 0; i <= header.length(); i++) {
            char c = i < header.length() ? header.charAt(i) : '-';
            if (Character.isLetterOrDigit(c)) {
                run++;
                letter |= Character.isLetter(c);
                digit |= Character.isDigit(c);
            } else {
                if (run >= SECRET_LIKE_RUN && letter && digit) {
                    return true;
                }
                run = 0;
                letter = false;
                digit = false;
            }
        }
        return false;
    }

    /** No exempt section: every caller is counted. */
    static ExemptConfig disabled() {
        return DISABLED;
    }

    /** The request header carrying the token; null when the rule file has no exempt section. */
    public String header() {
        return header;
    }

    /** The accepted tokens' sources, in file order. */
    public List<TokenSource> tokens() {
        return tokens;
    }

    /** True when there is a header and at least one token. */
    public boolean isEnabled() {
        return header != null && !tokens.isEmpty();
    }

    /** Copies of the SHA-256 digests of the accepted tokens, in file order. */
    public List<byte[]> digests() {
        List<byte[]> digests = new ArrayList<>(tokens.size());
        for (TokenSource token : tokens) {
            digests.add(token.digest());
        }
        return digests;
    }

    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof ExemptConfig)) {
            return false;
        }
        ExemptConfig that = (ExemptConfig) other;
        return Objects.equals(header, that.header) && tokens.equals(that.tokens);
    }

    @Override
    public int hashCode() {
        return Objects.hash(header, tokens);
    }

    /** {@code header X-Internal-Token, tokens env:A, sha256}: sources only, never values. */
    @Override
    public String toString() {
        if (!isEnabled()) {
            return "none";
        }
        String shown = looksLikeASecret(header) ? "(" + header.length() + " characters, not shown: it looks like a token)"
                : header;
        return "header " + shown + ", tokens "
                + tokens.stream().map(TokenSource::describe).collect(Collectors.joining(", "));
    }
}
