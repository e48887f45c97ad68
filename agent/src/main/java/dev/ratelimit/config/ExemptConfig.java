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
        return "header " + header + ", tokens "
                + tokens.stream().map(TokenSource::describe).collect(Collectors.joining(", "));
    }
}
