package dev.ratelimit.config;

import java.math.BigInteger;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;
import org.snakeyaml.engine.v2.nodes.Tag;

/**
 * Typed reads of YAML nodes. Each read reports a wrong type to the error list and returns null,
 * so that the caller carries on and the user sees every problem in one run. {@code what} names the
 * setting in messages, as in {@code "limit"} or {@code "store.max-keys"}.
 */
final class NodeReader {

    private static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);

    private final ErrorList errors;

    NodeReader(ErrorList errors) {
        this.errors = errors;
    }

    ErrorList errors() {
        return errors;
    }

    /** A mapping with the given keys, or null after reporting that {@code node} is something else. */
    YamlMapping mapping(Node node, String what, List<String> keys) {
        if (!(node instanceof MappingNode)) {
            errors.add(node, what + " must be a mapping with the keys " + String.join(", ", keys)
                    + ", not " + describe(node));
            return null;
        }
        return new YamlMapping((MappingNode) node, what, keys, errors);
    }

    /** The items of a list, or null after reporting that {@code node} is something else. */
    List<Node> list(Node node, String what) {
        if (!(node instanceof SequenceNode)) {
            errors.add(node, what + " must be a list, not " + describe(node));
            return null;
        }
        return ((SequenceNode) node).getValue();
    }

    /** The items of a list, or {@code node} alone when it is a single value. */
    List<Node> oneOrMany(Node node) {
        return node instanceof SequenceNode ? ((SequenceNode) node).getValue() : List.of(node);
    }

    /**
     * The text of a scalar. Numbers and booleans are accepted as their text ({@code name: 404}); a
     * list, a mapping or nothing is reported and gives null.
     */
    String text(Node node, String what) {
        if (!(node instanceof ScalarNode) || node.getTag().equals(Tag.NULL)) {
            errors.add(node, what + " must be text, not " + describe(node));
            return null;
        }
        return ((ScalarNode) node).getValue();
    }

    /** A whole number from {@code min} to {@code max}, or null after reporting why not. */
    Long wholeNumber(Node node, String what, long min, long max) {
        String range = max == Long.MAX_VALUE ? "a whole number of at least " + min
                : "a whole number from " + min + " to " + max;
        if (!(node instanceof ScalarNode) || !(node.getTag().equals(Tag.INT) || node.getTag().equals(Tag.FLOAT))) {
            errors.add(node, what + " must be " + range + ", not " + describeValue(node));
            return null;
        }
        String value = ((ScalarNode) node).getValue();
        if (!value.matches("[-+]?[0-9]+")) {
            errors.add(node, what + " must be " + range + ", not " + quoted(value));
            return null;
        }
        // more than 19 digits, leading zeros aside, is beyond a long: said without parsing them, which
        // costs the square of their number (a million digits took 15 s, per use of an alias to it)
        int digits = value.length() - (value.charAt(0) == '-' || value.charAt(0) == '+' ? 1 : 0);
        for (int i = value.length() - digits; i < value.length() - 1 && value.charAt(i) == '0'; i++) {
            digits--;
        }
        if (digits > 19) {
            errors.add(node, what + " must be " + range + ", not " + cut(value)
                    + (value.charAt(0) == '-' ? " (too small)" : " (too large)"));
            return null;
        }
        BigInteger number = new BigInteger(value);
        if (number.compareTo(BigInteger.valueOf(min)) < 0 || number.compareTo(BigInteger.valueOf(max)) > 0) {
            String limit = number.compareTo(LONG_MAX) > 0 ? " (too large)"
                    : number.compareTo(BigInteger.valueOf(Long.MIN_VALUE)) < 0 ? " (too small)" : "";
            errors.add(node, what + " must be " + range + ", not " + cut(value) + limit);
            return null;
        }
        return number.longValue();
    }

    /** A duration such as {@code 1m}, or null after reporting why not. */
    Duration duration(Node node, String what) {
        String text = text(node, what);
        if (text == null) {
            return null;
        }
        try {
            return Durations.parse(text);
        } catch (IllegalArgumentException e) {
            errors.add(node, what + ": " + e.getMessage());
            return null;
        }
    }

    /**
     * true or false, or null after reporting why not. The value is not repeated: the only boolean
     * setting is a rule's {@code exempt}, where an internal token is easily pasted.
     */
    Boolean bool(Node node, String what) {
        if (!(node instanceof ScalarNode) || !node.getTag().equals(Tag.BOOL)) {
            errors.add(node, what + " must be true or false, not " + describe(node));
            return null;
        }
        return Boolean.valueOf(((ScalarNode) node).getValue().toLowerCase(Locale.ROOT));
    }

    /** The constant spelled by {@code node}, or null after listing the accepted spellings. */
    <E extends Enum<E>> E choice(Node node, String what, E[] values, Function<E, String> yamlName,
            Function<String, E> fromYaml) {
        String text = text(node, what);
        if (text == null) {
            return null;
        }
        E value = fromYaml.apply(text);
        if (value == null) {
            errors.add(node, "unknown " + what + " " + quoted(text) + "; expected one of "
                    + Arrays.stream(values).map(yamlName).collect(Collectors.joining(", ")));
        }
        return value;
    }

    /** Longer text quoted in a message is cut to this many characters. */
    static final int MAX_QUOTED = 64;

    /**
     * {@code text} in quotes as a message gives it: whole up to {@link #MAX_QUOTED} characters,
     * else its start and its length. A 300 KB value, quoted whole by each of its thousands of uses
     * through an alias, filled the heap while the errors were listed (review of the twenty-third
     * round).
     */
    static String quoted(String text) {
        return text.length() <= MAX_QUOTED ? "'" + text + "'"
                : "'" + start(text) + "...' (" + text.codePointCount(0, text.length()) + " characters)";
    }

    /** {@code text} as a message gives it unquoted (a number, a path): cut as {@link #quoted} cuts. */
    static String cut(String text) {
        return text.length() <= MAX_QUOTED ? text
                : start(text) + "... (" + text.codePointCount(0, text.length()) + " characters)";
    }

    /** The first {@link #MAX_QUOTED} chars of {@code text}, one fewer rather than half a surrogate pair. */
    private static String start(String text) {
        int end = Character.isHighSurrogate(text.charAt(MAX_QUOTED - 1)) ? MAX_QUOTED - 1 : MAX_QUOTED;
        return text.substring(0, end);
    }

    /**
     * Like {@link #describe}, but quoting text. Only for settings that cannot hold a secret: whole
     * numbers ({@code limit: five}).
     */
    private static String describeValue(Node node) {
        if (node instanceof ScalarNode && node.getTag().equals(Tag.STR)) {
            return "the text " + quoted(((ScalarNode) node).getValue());
        }
        if (node instanceof ScalarNode && (node.getTag().equals(Tag.INT) || node.getTag().equals(Tag.FLOAT))) {
            return "the number " + cut(((ScalarNode) node).getValue());
        }
        return describe(node);
    }

    /**
     * How a node is named in messages: "a list", "a mapping", "nothing", "a number", "text", "true".
     * Never the text or the number itself: the node may be a token (a list of tokens written as one
     * number, say), and tokens are never printed.
     */
    static String describe(Node node) {
        if (node instanceof MappingNode) {
            return "a mapping";
        }
        if (node instanceof SequenceNode) {
            return "a list";
        }
        Tag tag = node.getTag();
        String value = ((ScalarNode) node).getValue();
        if (tag.equals(Tag.NULL)) {
            return "nothing";
        }
        if (tag.equals(Tag.INT) || tag.equals(Tag.FLOAT)) {
            return "a number";
        }
        if (tag.equals(Tag.BOOL)) {
            return value;
        }
        return "text";
    }
}
