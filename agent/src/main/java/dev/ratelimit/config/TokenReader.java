package dev.ratelimit.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.snakeyaml.engine.v2.nodes.Node;

/**
 * Resolves the rule file's secrets: exempt tokens and {@code ${env:NAME}} references in the Redis
 * URI. <b>Important</b>: no message written here may contain a secret or an environment
 * variable's value; name the variable or the file instead. Token bytes are hashed at once and the
 * plaintext arrays are cleared.
 */
final class TokenReader {

    /**
     * Shorter tokens are guessable, wherever they come from; a short literal was most likely meant
     * to be something else.
     */
    static final int MIN_TOKEN_LENGTH = 16;
    static final long MAX_TOKEN_FILE_SIZE = 64 * 1024;

    private static final String HEADER_UNSAFE = "contains spaces, control or non-ASCII characters,"
            + " which cannot be sent reliably in an HTTP header";

    private static final Pattern ENV = Pattern.compile("\\$\\{env:([A-Za-z_][A-Za-z0-9_]*)}");
    private static final Pattern FILE = Pattern.compile("\\$\\{file:([^}]+)}");
    private static final Pattern SHA256 = Pattern.compile("sha256:([0-9a-fA-F]{64})");
    /**
     * The start of what reads as a digest: {@code sha256:} and its other spellings ({@code SHA256:},
     * {@code sha-256:}, {@code sha256=}, Subresource Integrity's {@code sha256-}, LDAP's
     * {@code {SHA256}}), other SHA-2 and SHA-3 sizes, SHA-1, MD5. Taken as a literal, or from the
     * environment or a file, such a token would make the digest itself, public in a file kept in
     * git, the accepted token, and the real token a forged one. Only {@code sha256:} followed by 64
     * hex digits, written in the rule file itself, is a digest token.
     */
    private static final Pattern DIGEST_LIKE = Pattern.compile(
            "(?i)(?:(?:sha[-_]?(?:1|224|256|384|512)|sha3[-_](?:224|256|384|512)|sha512/(?:224|256)|md5)[:=-]"
                    + "|\\{s?(?:sha(?:1|224|256|384|512)?|md5)})");

    private final NodeReader reader;
    private final Path baseDir;
    private final Function<String, String> env;

    TokenReader(NodeReader reader, Path baseDir, Function<String, String> env) {
        this.reader = reader;
        this.baseDir = baseDir;
        this.env = env;
    }

    /** The token given by {@code node}, or null after reporting why it cannot be used. */
    TokenSource token(Node node) {
        String text = reader.text(node, "an exempt token");
        if (text == null) {
            return null;
        }
        ErrorList errors = reader.errors();
        if (text.startsWith("${")) {
            Matcher envMatch = ENV.matcher(text);
            if (envMatch.matches()) {
                return fromEnvironment(node, envMatch.group(1));
            }
            Matcher fileMatch = FILE.matcher(text);
            if (fileMatch.matches()) {
                return fromFile(node, fileMatch.group(1));
            }
            errors.add(node, "a token starting with '${' must be ${env:NAME} (NAME of letters, digits and _)"
                    + " or ${file:PATH}");
            return null;
        }
        if (text.contains("${env:") || text.contains("${file:")) {
            // Bearer-${env:X}: the Redis URI substitutes references inside its text, a token did
            // not, and took the reference's text for the secret, with no error: no exemption, and
            // the file's text was the token (the SPEC audit of the thirty-seventh round). Only a
            // reference's own opening: a literal token holding '${' otherwise is still a token
            // (the review of the thirty-seventh round's commits: a valid token broke on upgrade)
            errors.add(node, "a token holding ${env: or ${file: must be one whole ${env:NAME} or ${file:PATH}: references"
                    + " are not substituted inside a token; put the whole token in the variable or the file");
            return null;
        }
        if (text.startsWith("sha256:")) {
            Matcher digestMatch = SHA256.matcher(text);
            if (!digestMatch.matches()) {
                errors.add(node, "a sha256: token must be followed by exactly 64 hex digits, the SHA-256 of the token");
                return null;
            }
            return TokenSource.fromDigest(decodeHex(digestMatch.group(1)));
        }
        if (looksLikeDigest(text)) {
            errors.add(node, "a digest token is written sha256: (in lower case) and 64 hex digits, the SHA-256 of"
                    + " the token; no other prefix or digest is accepted");
            return null;
        }
        if (text.length() < MIN_TOKEN_LENGTH) {
            errors.add(node, "this literal token is too short to be a secret: use at least " + MIN_TOKEN_LENGTH
                    + " characters, or better ${env:NAME}, ${file:PATH} or sha256:HEX");
            return null;
        }
        if (text.length() > ExemptConfig.MAX_TOKEN_CHARS) {
            errors.add(node, "this literal token " + TOO_LONG);
            return null;
        }
        // the characters, not their UTF-8: getBytes writes a lone surrogate ("\ud800" in a
        // double-quoted value) as '?', which passed as visible ASCII
        if (!isHeaderSafe(text)) {
            errors.add(node, "this literal token " + HEADER_UNSAFE);
            return null;
        }
        return TokenSource.literal(text);
    }

    private TokenSource fromEnvironment(Node node, String name) {
        String value = env.apply(name);
        if (value == null) {
            reader.errors().add(node, "environment variable " + name + " is not set; it must hold the internal token");
            return null;
        }
        // a Kubernetes Secret or a file read into a variable ($(cat token)) often ends in a newline
        byte[] token = withoutTrailingLineBreaks(value.getBytes(StandardCharsets.UTF_8));
        try {
            if (token.length == 0) {
                reader.errors().add(node, "environment variable " + name + " is empty; it must hold the internal token");
                return null;
            }
            // getBytes writes a lone surrogate (a Windows environment can hold one) as '?'
            if (!isHeaderSafe(new AsciiView(token)) || value.chars().anyMatch(c -> Character.isSurrogate((char) c))) {
                reader.errors().add(node, "the token in environment variable " + name + " " + HEADER_UNSAFE);
                return null;
            }
            if (looksLikeDigest(new AsciiView(token))) {
                reader.errors().add(node, "the token in environment variable " + name + " " + DIGEST_NOT_TOKEN);
                return null;
            }
            if (token.length < MIN_TOKEN_LENGTH) {
                reader.errors().add(node, "the token in environment variable " + name + " " + TOO_SHORT);
                return null;
            }
            if (token.length > ExemptConfig.MAX_TOKEN_CHARS) {
                reader.errors().add(node, "the token in environment variable " + name + " " + TOO_LONG);
                return null;
            }
            return TokenSource.fromEnvironment(name, token);
        } finally {
            Arrays.fill(token, (byte) 0);
        }
    }

    /**
     * The paths of the {@code ${file:...}} references in a rule file's text, as written: what a
     * rejected version of the file names, so that a token file it waits for is watched too.
     */
    static List<String> fileReferences(String text) {
        List<String> paths = new ArrayList<>();
        Matcher matcher = FILE.matcher(text);
        while (matcher.find()) {
            paths.add(matcher.group(1));
        }
        return paths;
    }

    private TokenSource fromFile(Node node, String written) {
        ErrorList errors = reader.errors();
        Path path;
        try {
            path = baseDir.resolve(written);
        } catch (InvalidPathException e) {
            errors.add(node, "token file " + NodeReader.cut(written) + " is not a valid path");
            return null;
        }
        if (Files.exists(path) && !Files.isRegularFile(path)) {
            // a FIFO blocks its reader until a writer comes, which stopped the start (premain),
            // check, and the watcher's every later reload for good
            errors.add(node, "token file " + NodeReader.cut(written) + " is not a regular file (a pipe, a device or a directory);"
                    + " it must be a file holding just the token");
            return null;
        }
        byte[] content;
        try {
            // the read is bounded whatever the size says
            long size = Files.size(path);
            content = size > MAX_TOKEN_FILE_SIZE ? null : ConfigLoader.readAtMost(path, MAX_TOKEN_FILE_SIZE);
            if (content == null || content.length > MAX_TOKEN_FILE_SIZE) {
                errors.add(node, "token file " + NodeReader.cut(written) + " is larger than 64 KB; it must hold just the token");
                return null;
            }
        } catch (NoSuchFileException e) {
            errors.add(node, "token file " + NodeReader.cut(written) + " does not exist");
            return null;
        } catch (IOException | SecurityException e) {
            errors.add(node, "cannot read token file " + written + " (" + e.getClass().getSimpleName() + ")");
            return null;
        }
        byte[] token = withoutTrailingLineBreaks(content);
        try {
            if (token.length == 0) {
                errors.add(node, "token file " + NodeReader.cut(written) + " is empty; it must hold the internal token");
                return null;
            }
            if (!isHeaderSafe(new AsciiView(token))) {
                errors.add(node, "the token in file " + written + " " + HEADER_UNSAFE);
                return null;
            }
            if (looksLikeDigest(new AsciiView(token))) {
                errors.add(node, "the token in file " + written + " " + DIGEST_NOT_TOKEN);
                return null;
            }
            if (token.length < MIN_TOKEN_LENGTH) {
                errors.add(node, "the token in file " + written + " " + TOO_SHORT);
                return null;
            }
            if (token.length > ExemptConfig.MAX_TOKEN_CHARS) {
                errors.add(node, "the token in file " + written + " " + TOO_LONG);
                return null;
            }
            return TokenSource.fromFile(written, token);
        } finally {
            Arrays.fill(token, (byte) 0);
        }
    }

    /**
     * A copy of {@code content} without its trailing CR and LF bytes; {@code content} is cleared.
     * An environment variable's token and a file's are trimmed alike.
     */
    private static byte[] withoutTrailingLineBreaks(byte[] content) {
        int length = content.length;
        while (length > 0 && (content[length - 1] == '\n' || content[length - 1] == '\r')) {
            length--;
        }
        byte[] token = Arrays.copyOf(content, length);
        Arrays.fill(content, (byte) 0);
        return token;
    }

    private static final String TOO_SHORT = "is too short to be a secret: use at least " + MIN_TOKEN_LENGTH
            + " characters (openssl rand -hex 32 makes one)";

    /** The header check forges a longer value unhashed (TokenVerifier): such a token never exempted. */
    private static final String TOO_LONG = "is longer than " + ExemptConfig.MAX_TOKEN_CHARS + " characters, the longest"
            + " header value the agent compares: its holder would never be exempt";

    private static final String DIGEST_NOT_TOKEN = "starts like a digest; the environment or a file holds the token"
            + " itself (a digest is written sha256:HEX in the rule file)";

    /** Whether {@code text} starts like a digest ({@link #DIGEST_LIKE}). */
    private static boolean looksLikeDigest(CharSequence text) {
        return DIGEST_LIKE.matcher(text).lookingAt();
    }

    /**
     * Bytes read as characters, without copying a secret into a String: visible ASCII as itself,
     * a byte beyond ASCII as a char beyond it ({@code (char) (byte) 0xC3} is U+FFC3).
     */
    private static final class AsciiView implements CharSequence {
        private final byte[] bytes;
        private final int from;
        private final int to;

        AsciiView(byte[] bytes) {
            this(bytes, 0, bytes.length);
        }

        private AsciiView(byte[] bytes, int from, int to) {
            this.bytes = bytes;
            this.from = from;
            this.to = to;
        }

        @Override
        public int length() {
            return to - from;
        }

        @Override
        public char charAt(int index) {
            return (char) bytes[from + index];
        }

        @Override
        public CharSequence subSequence(int start, int end) {
            return new AsciiView(bytes, from + start, from + end);
        }

        @Override
        public String toString() {
            return "(a token)";
        }
    }

    /**
     * Visible ASCII only: what survives a trip through an HTTP header unchanged. Bytes are read
     * through {@link AsciiView}, where a byte beyond ASCII is a char beyond it too.
     */
    private static boolean isHeaderSafe(CharSequence token) {
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            if (c < 0x21 || c > 0x7E) {
                return false;
            }
        }
        return true;
    }

    private static byte[] decodeHex(String hex) {
        byte[] bytes = new byte[hex.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return bytes;
    }

    /**
     * {@code text} with every {@code ${env:NAME}} replaced by the variable's value, or null after
     * reporting a missing variable or a malformed reference.
     */
    String substituteEnvironment(Node node, String text, String what) {
        StringBuilder result = new StringBuilder();
        int start = 0;
        for (int ref = text.indexOf("${"); ref >= 0; ref = text.indexOf("${", start)) {
            Matcher matcher = ENV.matcher(text).region(ref, text.length());
            if (!matcher.lookingAt()) {
                reader.errors().add(node, what + " may only contain ${env:NAME} references"
                        + " (NAME of letters, digits and _)");
                return null;
            }
            String value = env.apply(matcher.group(1));
            if (value == null || value.isEmpty()) {
                reader.errors().add(node, "environment variable " + matcher.group(1) + ", used in " + what
                        + (value == null ? ", is not set" : ", is empty"));
                return null;
            }
            result.append(text, start, ref).append(value);
            start = matcher.end();
        }
        return result.append(text.substring(start)).toString();
    }
}
