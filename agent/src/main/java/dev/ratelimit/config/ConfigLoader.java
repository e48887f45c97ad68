package dev.ratelimit.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * Reads and validates a version 1 rule file.
 *
 * <p>The file is composed into YAML nodes (never into Java objects, so no tag can instantiate a
 * class) and walked by hand, which keeps every node's position for the error messages. Every
 * problem is collected before failing, so that one run of {@code check} shows them all. Secrets are
 * resolved here: environment and file tokens are hashed as soon as they are read.
 */
public final class ConfigLoader {

    /** Larger files are refused before parsing: a rule file is a few kilobytes. */
    public static final long MAX_FILE_SIZE = 1024 * 1024;

    private ConfigLoader() {
    }

    /**
     * Reads {@code file}, resolving {@code ${env:NAME}} from the process environment.
     *
     * @throws ConfigException listing every problem found
     */
    public static RuleSet load(Path file) throws ConfigException {
        return load(file, System::getenv);
    }

    /**
     * {@link #load(Path)} for the agent itself: the rule file must be a regular file. A pipe with
     * no writer (a FIFO) blocked start-up for good, without a word, and the watcher sees only
     * regular files, so the agent could never read a pipe's next version anyway; {@code check}
     * reads a pipe ({@code check <(envsubst < rules.yaml)}).
     *
     * @throws ConfigException listing every problem found
     */
    public static RuleSet loadFile(Path file) throws ConfigException {
        if (Files.exists(file) && !Files.isRegularFile(file) && !Files.isDirectory(file)) {
            throw failure(file.toString(), "is not a regular file (a pipe or a device): the agent reads its rule file"
                    + " again whenever it changes, so it must be a file");
        }
        return load(file);
    }

    /**
     * Reads {@code file}, resolving {@code ${env:NAME}} through {@code env} and relative
     * {@code ${file:PATH}} against the rule file's directory.
     *
     * @throws ConfigException listing every problem found
     */
    public static RuleSet load(Path file, Function<String, String> env) throws ConfigException {
        return load(file, read(file), env);
    }

    /**
     * Reads rules from {@code content}, the bytes of {@code file} as {@link #read} gave them: the
     * caller that must know which version of the file the rules came from reads it once.
     *
     * @throws ConfigException listing every problem found
     */
    public static RuleSet load(Path file, byte[] content, Function<String, String> env) throws ConfigException {
        String fileName = file.toString();
        String yaml = decode(content, fileName);
        Path parent = file.toAbsolutePath().getParent();
        return parse(yaml, fileName, parent == null ? Path.of("") : parent, env).readFrom(TokenSource.sha256(content));
    }


    /**
     * The file's bytes, but never more than {@code max} + 1 of them (more than {@code max} means
     * too large): a file's size may be 0 and its content endless ({@code /proc}), or it may grow
     * while it is read.
     */
    static byte[] readAtMost(Path file, long max) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return in.readNBytes((int) max + 1);
        }
    }

    /**
     * The rule file's bytes, at most {@link #MAX_FILE_SIZE} of them.
     *
     * @throws ConfigException when it is missing, unreadable, not a regular file, or too large
     */
    public static byte[] read(Path file) throws ConfigException {
        String fileName = file.toString();
        if (fileName.isEmpty()) {
            // Path.of("") is the working directory: "is a directory" said nothing of the empty name
            throw failure(fileName, "no rule file was named (the path is empty)");
        }
        byte[] bytes;
        try {
            if (Files.isDirectory(file)) {
                throw failure(fileName, "is a directory, not a rule file");
            }
            // a pipe (check <(envsubst < rules.yaml)) or a device reports size 0: the read
            // below is bounded whatever the size says
            long size = Files.size(file);
            if (size > MAX_FILE_SIZE) {
                throw failure(fileName, "the rule file is " + size + " bytes; rule files are limited to 1 MB");
            }
            bytes = readAtMost(file, MAX_FILE_SIZE);
        } catch (NoSuchFileException e) {
            // a relative path (the default ratelimit.yaml, say) is named with the directory it was
            // looked for in: the process's working directory (review of the thirty-third round)
            throw failure(fileName, "the rule file does not exist" + (file.isAbsolute() ? ""
                    : " (looked for in " + file.toAbsolutePath().normalize().getParent() + ")"));
        } catch (FileSystemException e) {
            // the system's reason (a symbolic link loop: "Too many levels of symbolic links"), not
            // just the exception's name, which said nothing of what to mend (review item L7 of
            // the thirty-third round); the reason is the system's text, never the file's
            throw failure(fileName, "cannot read the rule file (" + (e.getReason() == null
                    ? e.getClass().getSimpleName() : e.getReason()) + ")");
        } catch (IOException | SecurityException e) {
            throw failure(fileName, "cannot read the rule file (" + e.getClass().getSimpleName() + ")");
        }
        if (bytes.length > MAX_FILE_SIZE) {
            throw failure(fileName, "the rule file is larger than 1 MB; rule files are limited to 1 MB");
        }
        return bytes;
    }

    private static String decode(byte[] bytes, String fileName) throws ConfigException {
        if (bytes.length > MAX_FILE_SIZE) {
            throw failure(fileName, "the rule file is larger than 1 MB; rule files are limited to 1 MB");
        }
        ByteBuffer in = ByteBuffer.wrap(bytes);
        java.nio.CharBuffer out = java.nio.CharBuffer.allocate(bytes.length);
        java.nio.charset.CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        java.nio.charset.CoderResult result = decoder.decode(in, out, true);
        if (!result.isError()) {
            result = decoder.flush(out);
        }
        if (result.isError()) {
            // where the first byte that is not UTF-8 is (the byte itself is not shown: it may be
            // part of a token), on the line and column an editor shows
            out.flip();
            int line = 1;
            int lineStart = 0;
            for (int i = 0; i < out.length(); i++) {
                char c = out.charAt(i);
                // a line ends at LF, CR LF or a lone CR, as YAML (and an editor) count lines
                if (c == '\n' || (c == '\r' && (i + 1 == out.length() || out.charAt(i + 1) != '\n'))) {
                    line++;
                    lineStart = i + 1;
                }
            }
            int column = Character.codePointCount(out, lineStart, out.length()) + 1;
            throw new ConfigException(List.of(new ConfigError(fileName, line, column,
                    "the rule file is not valid UTF-8 text from here: save it as UTF-8")));
        }
        out.flip();
        return out.toString();
    }

    /** An error about the whole file: at line 1, column 1, so that it reads FILE:LINE:COLUMN like the rest. */
    private static ConfigException failure(String fileName, String message) {
        return new ConfigException(List.of(new ConfigError(fileName, 1, 1, message)));
    }

    /**
     * Validates rule file text.
     *
     * @param yaml the file's content
     * @param fileName the file's name as the user gave it, for error messages
     * @param baseDir the directory relative {@code ${file:PATH}} tokens are resolved against
     * @param env looks up environment variables for {@code ${env:NAME}}
     * @throws ConfigException listing every problem found
     */
    public static RuleSet parse(String yaml, String fileName, Path baseDir, Function<String, String> env)
            throws ConfigException {
        if (yaml.length() > MAX_FILE_SIZE) {
            throw failure(fileName, "the rule file is larger than 1 MB; rule files are limited to 1 MB");
        }
        String text = yaml.startsWith("\uFEFF") ? yaml.substring(1) : yaml;
        LoadSettings settings = LoadSettings.builder()
                .setLabel(fileName)
                .setSchema(new CoreSchema())
                // aliases are bounded by what expanding them costs, not by their number (BoundedComposer)
                .setMaxAliasesForCollections(Integer.MAX_VALUE)
                .setAllowRecursiveKeys(false)
                .setCodePointLimit((int) MAX_FILE_SIZE + 1)
                .build();
        Optional<Node> root;
        try {
            root = new BoundedComposer(settings, text).singleDocument();
            root.ifPresent(BoundedComposer::checkTreeSize);
        } catch (BoundedComposer.OverBudget e) {
            throw new ConfigException(List.of(at(fileName, e.mark(), e.getMessage())));
        } catch (MarkedYamlEngineException e) {
            throw new ConfigException(List.of(syntaxError(fileName, e)));
        } catch (org.snakeyaml.engine.v2.exceptions.ReaderException e) {
            throw new ConfigException(List.of(characterNotAllowed(fileName, text, e.getPosition(), e.getCodePoint())));
        } catch (YamlEngineException e) {
            throw failure(fileName, "invalid YAML: " + firstLine(e.getMessage()));
        } catch (NumberFormatException e) {
            // the scanner reads \U's 8 digits as an int: from 80000000 on, Integer.parseInt throws
            // out of the parser, with no position; the escape is found here
            throw new ConfigException(List.of(escapeBeyondInt(fileName, text)));
        } catch (RuntimeException e) {
            // The parser is not ours; whatever it throws, the user gets a message and no stack trace.
            throw failure(fileName, "invalid YAML (" + e.getClass().getSimpleName() + ")");
        } catch (StackOverflowError e) {
            // The parser recurses once per level of nesting and has no depth limit of its own: a file
            // of a few thousand nested [ or { (or indented keys) must be refused, not escape as an
            // Error that start-up took for "run without limits" and that killed the reload watcher.
            throw failure(fileName, "the rule file nests lists or mappings too deeply to be a rule file");
        }
        if (root.isEmpty()) {
            throw failure(fileName, "the rule file is empty; it needs at least 'version: 1'");
        }
        return RuleFileReader.read(root.get(), fileName, baseDir, env);
    }

    /**
     * A character YAML does not allow anywhere in a file (a control character: NUL, form feed,
     * escape, DEL...), at its line and column, by its code only: the reader names no position,
     * and the file was refused at 1:1, in a file of any length, with "special characters are not
     * allowed" (the SPEC audit of the thirty-seventh round). The character is not printed: it
     * may sit inside a token. Columns count code points, as the parser's other positions do.
     */
    static ConfigError characterNotAllowed(String fileName, String text, int codePointIndex, int codePoint) {
        int line = 1;
        int column = 1;
        int index = 0;
        for (int seen = 0; seen < codePointIndex && index < text.length(); seen++) {
            int c = text.codePointAt(index);
            index += Character.charCount(c);
            if (c == '\n' || (c == '\r' && (index >= text.length() || text.charAt(index) != '\n'))) {
                line++;
                column = 1;
            } else if (c != '\r') {
                column++;
            }
        }
        return new ConfigError(fileName, line, column, String.format(java.util.Locale.ROOT,
                "invalid YAML: the character U+%04X is not allowed in a YAML file, not even in a comment or a quoted"
                        + " value (in a double-quoted value, write it as the escape \\u%04X)", codePoint, codePoint));
    }

    private static final java.util.regex.Pattern LONG_ESCAPE = java.util.regex.Pattern.compile("\\\\U[0-9A-Fa-f]{8}");

    /**
     * The error for a {@code \U} escape the parser could not read as an int, at the first one
     * whose code is 80000000 or more and that is an escape inside a double-quoted value on its
     * line (not {@code \\U...}, a backslash written out, nor in a comment or a plain value: an
     * odd run of backslashes, after an odd count of unescaped quotes), without its digits; at the
     * file's start with the same message if none is found so (a double-quoted value over several
     * lines).
     */
    private static ConfigError escapeBeyondInt(String fileName, String text) {
        java.util.regex.Matcher escape = LONG_ESCAPE.matcher(text);
        String message = "invalid YAML: found an escape whose code is beyond Unicode (in a double-quoted value,"
                + " write \\\\ for a backslash)";
        while (escape.find()) {
            int at = escape.start();
            if (Character.digit(text.charAt(at + 2), 16) < 8) {
                continue;
            }
            int lineStart = text.lastIndexOf('\n', at) + 1;
            int backslashes = 0;
            boolean quoted = false;
            boolean singleQuoted = false;
            boolean comment = false;
            for (int i = lineStart; i < at && !comment; i++) {
                char c = text.charAt(i);
                if (singleQuoted) {
                    // '' inside single quotes is a quote: it closes and opens again
                    singleQuoted = c != '\'';
                } else if (quoted) {
                    quoted = !(c == '"' && backslashes % 2 == 0);
                } else if (c == '"') {
                    quoted = true;
                } else if (c == '\'') {
                    singleQuoted = true;
                } else if (c == '#' && (i == lineStart || Character.isWhitespace(text.charAt(i - 1)))) {
                    comment = true;
                }
                backslashes = c == '\\' ? backslashes + 1 : 0;
            }
            if (!quoted || comment || backslashes % 2 != 0) {
                continue;
            }
            int line = 1;
            for (int i = 0; i < lineStart; i++) {
                if (text.charAt(i) == '\n') {
                    line++;
                }
            }
            return new ConfigError(fileName, line, text.codePointCount(lineStart, at) + 1, message);
        }
        return new ConfigError(fileName, 1, 1, message);
    }

    /** One line, at the problem's position, without SnakeYAML's source snippet. */
    private static ConfigError syntaxError(String fileName, MarkedYamlEngineException e) {
        String problem = e.getProblem() == null ? "syntax error" : withoutNames(firstLine(e.getProblem()));
        String context = firstLine(e.getContext());
        // a quote or a bracket never closed is found at the end of the file: the place it opened
        // (the context's mark) is the one to fix (review of the thirty-third round); only for a
        // quoted value or a flow collection, whose context mark is where it opens
        boolean unclosed = (problem.contains("end of stream") || problem.contains("<stream end>"))
                && e.getContextMark().isPresent()
                && (context.startsWith("while scanning a quoted scalar")
                        || context.startsWith("while scanning a double-quoted scalar")
                        || context.startsWith("while scanning a single-quoted scalar")
                        || context.startsWith("while parsing a flow sequence")
                        || context.startsWith("while parsing a flow mapping"));
        Optional<Mark> where = unclosed ? e.getContextMark() : e.getProblemMark().or(e::getContextMark);
        if (problem.startsWith("expected <block end>") && where.isPresent()) {
            // the indentation hint where the problem is a line's first token; elsewhere on the
            // line something follows a value ('it''s' written 'it's', "a" b)
            problem += startsItsLine(e.getProblemMark().orElse(where.get()))
                    ? " (check this line's indentation against the lines above)"
                    : " (something follows a value on this line: quote the whole value, and write '' for a ' inside"
                            + " single quotes)";
        }
        context = context.isEmpty() ? "" : context + ", ";
        return at(fileName, where, "invalid YAML: " + context + problem + (unclosed ? " (it opens here and is not closed)" : ""));
    }

    /** Whether only blanks come before {@code mark} on its line (the parser's marks keep the line's text). */
    private static boolean startsItsLine(Mark mark) {
        int[] buffer = mark.getBuffer();
        int pointer = mark.getPointer();
        if (buffer == null || pointer > buffer.length) {
            return true;
        }
        for (int i = pointer - 1; i >= 0 && buffer[i] != '\n' && buffer[i] != '\r'; i--) {
            if (buffer[i] != ' ') {
                return false;
            }
        }
        return true;
    }

    /** An error at {@code mark}, or at the file's start when there is none. */
    private static ConfigError at(String fileName, Optional<Mark> mark, String message) {
        return mark.map(m -> new ConfigError(fileName, m.getLine() + 1, m.getColumn() + 1, message))
                .orElseGet(() -> new ConfigError(fileName, 1, 1, message));
    }

    /**
     * The parser's problem without the name it may end with: an undefined alias is a value that
     * starts with {@code *} (a token can), and the parser names it whole.
     */
    private static final java.util.regex.Pattern CHARACTER_FOUND =
            java.util.regex.Pattern.compile("'?[^\\s']{1,2}'? ?\\(\\d+\\)");

    private static String withoutNames(String problem) {
        // the parser's words for the commonest slips, with what to do about them (review of the
        // thirty-third round: "parser jargon with no hint")
        if (problem.startsWith("mapping values are not allowed here")) {
            return problem + " (check this line's indentation, or quote a value that holds ': ')";
        }
        if (problem.startsWith("found character '\\t(TAB)'")) {
            return "found a tab (indent with spaces: YAML does not allow tabs there)";
        }
        if (problem.startsWith("found undefined alias")) {
            return "found undefined alias (a value starting with '*' must be quoted)";
        }
        if (problem.startsWith("found undefined tag handle") || problem.startsWith("duplicate tag handle")) {
            return problem.substring(0, problem.indexOf(" handle") + " handle".length())
                    + " (a value starting with '!' must be quoted)";
        }
        int found = problem.indexOf(", but found");
        if (problem.matches("found unknown escape character [0-9A-Fa-f]{8}")) {
            // the parser goes on with the escape's 8 hexadecimal digits: 8 characters of a token
            // (\U with a code beyond Unicode; review of the thirty-third round)
            return "found an escape whose code is beyond Unicode (in a double-quoted value, write \\\\ for a"
                    + " backslash)";
        }
        if (problem.startsWith("expected escape sequence") && found >= 0) {
            // what follows is the value's own characters (up to 8 of a token)
            return problem.substring(0, found) + " (in a double-quoted value, write \\\\ for a backslash)";
        }
        // the scanner names the character it stopped at, and its code: "found S(83)", "but found
        // 'é' (233)"; a character of a value, left out (the line and column point at it)
        return CHARACTER_FOUND.matcher(problem).replaceAll("(left out)");
    }

    private static String firstLine(String text) {
        if (text == null) {
            return "";
        }
        int newline = text.indexOf('\n');
        return (newline < 0 ? text : text.substring(0, newline)).trim();
    }
}
