package dev.ratelimit.config;

import java.util.Objects;

/**
 * One problem found in a rule file, with the position of the offending YAML node; a problem with
 * the whole file (empty, not UTF-8, too large, missing) is at line 1, column 1, so that every
 * error reads {@code FILE:LINE:COLUMN: message} as the contract says. Messages are written for the
 * user and never contain a token or an environment variable's value.
 */
public final class ConfigError {

    private final String file;
    private final int line;
    private final int column;
    private final String message;

    /**
     * @param file the rule file's path as the user gave it
     * @param line 1-based line; below 1 is taken as 1
     * @param column 1-based column; below 1 is taken as 1
     * @param message what is wrong and what was expected
     */
    public ConfigError(String file, int line, int column, String message) {
        this.file = Objects.requireNonNull(file, "file");
        this.line = Math.max(line, 1);
        this.column = Math.max(column, 1);
        this.message = Objects.requireNonNull(message, "message");
    }

    /** The rule file's path as the user gave it. */
    public String file() {
        return file;
    }

    /** The 1-based line of the offending node; 1 for a problem with the whole file. */
    public int line() {
        return line;
    }

    /** The 1-based column of the offending node; 1 for a problem with the whole file. */
    public int column() {
        return column;
    }

    /** What is wrong, without the position. */
    public String message() {
        return message;
    }

    /**
     * {@code FILE:LINE:COLUMN: message}: one line, whatever the file held. A message repeats values from the file, and a value with a
     * line break (a quoted {@code "\\n"}, a block scalar) printed as it was made one error
     * look like two, the second with a position of the writer's choosing.
     */
    public String format() {
        return oneLine(file) + ":" + line + ":" + column + ": " + oneLine(message);
    }

    /**
     * {@code text} with line breaks and other control characters written as escapes, and so the
     * invisible ones (format characters: a byte order mark, a zero-width space, a right-to-left
     * override), which made {@code unknown key 'rules' (did you mean 'rules'?)} of a key that
     * began with U+FEFF (review of the thirty-third round).
     */
    static String oneLine(String text) {
        int i = 0;
        while (i < text.length() && !breaksTheLine(text.codePointAt(i))) {
            i += Character.charCount(text.codePointAt(i));
        }
        if (i == text.length()) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length() + 8).append(text, 0, i);
        while (i < text.length()) {
            int c = text.codePointAt(i);
            i += Character.charCount(c);
            if (!breaksTheLine(c)) {
                out.appendCodePoint(c);
            } else if (c == '\n') {
                out.append("\\n");
            } else if (c == '\r') {
                out.append("\\r");
            } else if (c == '\t') {
                out.append("\\t");
            } else if (c <= 0xFFFF) {
                out.append(String.format("\\u%04x", c));
            } else {
                // a format character outside the basic plane (a tag, U+E0001)
                out.append(String.format("\\u{%x}", c));
            }
        }
        return out.toString();
    }

    private static boolean breaksTheLine(int c) {
        return Character.isISOControl(c) || c == '\u2028' || c == '\u2029' || Character.getType(c) == Character.FORMAT;
    }

    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof ConfigError)) {
            return false;
        }
        ConfigError that = (ConfigError) other;
        return line == that.line && column == that.column
                && file.equals(that.file) && message.equals(that.message);
    }

    @Override
    public int hashCode() {
        return Objects.hash(file, line, column, message);
    }

    @Override
    public String toString() {
        return format();
    }
}
