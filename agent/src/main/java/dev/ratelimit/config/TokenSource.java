package dev.ratelimit.config;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Objects;

/**
 * One accepted internal token, kept only as its SHA-256 digest together with where it came from.
 * The plaintext is hashed as soon as it is read and never stored; {@link #toString()} and
 * {@link #describe()} name the source, never the value.
 */
public final class TokenSource {

    /** Where the token came from. */
    public enum Kind {
        /** {@code ${env:NAME}}: an environment variable, trailing newline trimmed. */
        ENV,
        /** {@code ${file:PATH}}: a file, trailing newline trimmed. */
        FILE,
        /** {@code sha256:HEX}: the digest itself, for rule files kept in version control. */
        SHA256,
        /** The token written in the rule file. */
        LITERAL
    }

    /** Length of a SHA-256 digest in bytes. */
    public static final int DIGEST_LENGTH = 32;

    private final Kind kind;
    private final String reference;
    private final byte[] digest;

    private TokenSource(Kind kind, String reference, byte[] digest) {
        if (digest.length != DIGEST_LENGTH) {
            throw new IllegalArgumentException("a SHA-256 digest has 32 bytes, not " + digest.length);
        }
        this.kind = Objects.requireNonNull(kind, "kind");
        this.reference = reference;
        this.digest = digest.clone();
    }

    /** A token from the environment variable {@code name}, whose value is {@code token}. */
    static TokenSource fromEnvironment(String name, byte[] token) {
        return new TokenSource(Kind.ENV, name, sha256(token));
    }

    /** A token read from the file {@code path} (as written in the rule file). */
    static TokenSource fromFile(String path, byte[] token) {
        return new TokenSource(Kind.FILE, path, sha256(token));
    }

    /** A token given in the rule file by its digest. */
    static TokenSource fromDigest(byte[] digest) {
        return new TokenSource(Kind.SHA256, null, digest);
    }

    /** A token written in the rule file as is. */
    static TokenSource literal(String token) {
        return new TokenSource(Kind.LITERAL, null, sha256(token.getBytes(StandardCharsets.UTF_8)));
    }

    /** The SHA-256 digest of {@code token}'s bytes, as the runtime hashes a presented token. */
    public static byte[] sha256(byte[] token) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(token);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /** Where the token came from. */
    public Kind kind() {
        return kind;
    }

    /** The environment variable's name or the file's path as written; null for SHA256 and LITERAL. */
    public String reference() {
        return reference;
    }

    /** A copy of the token's SHA-256 digest (32 bytes). */
    public byte[] digest() {
        return digest.clone();
    }

    /** {@code env:NAME}, {@code file:PATH}, {@code sha256} or {@code literal}; never the value. */
    public String describe() {
        switch (kind) {
            case ENV:
                return "env:" + reference;
            case FILE:
                return "file:" + reference;
            case SHA256:
                return "sha256";
            default:
                return "literal";
        }
    }

    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof TokenSource)) {
            return false;
        }
        TokenSource that = (TokenSource) other;
        return kind == that.kind && Objects.equals(reference, that.reference)
                && MessageDigest.isEqual(digest, that.digest);
    }

    @Override
    public int hashCode() {
        return 31 * kind.hashCode() + Objects.hashCode(reference);
    }

    /** The same as {@link #describe()}: never the value. */
    @Override
    public String toString() {
        return describe();
    }
}
