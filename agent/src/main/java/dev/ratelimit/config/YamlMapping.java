package dev.ratelimit.config;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;

/**
 * A YAML mapping checked against the keys it may have: duplicate, unknown and non-text keys are
 * reported once, here, with a suggestion when an unknown key is a near miss of a known one.
 */
final class YamlMapping {

    private final MappingNode node;
    private final Map<String, NodeTuple> entries = new HashMap<>();
    /** The known keys an unknown key was taken for a misspelling of ("did you mean"). */
    private final Set<String> suggested = new HashSet<>();

    YamlMapping(MappingNode node, String where, List<String> knownKeys, ErrorList errors) {
        this.node = node;
        for (NodeTuple tuple : node.getValue()) {
            Node keyNode = tuple.getKeyNode();
            if (!(keyNode instanceof ScalarNode)) {
                errors.add(keyNode, "a key in " + where + " must be a plain name, not a list or mapping");
                continue;
            }
            String key = ((ScalarNode) keyNode).getValue();
            NodeTuple first = entries.get(key);
            if (first != null) {
                errors.add(keyNode, "duplicate key " + shown(key) + " in " + where + " (first given on line "
                        + (first.getKeyNode().getStartMark().map(m -> m.getLine() + 1).orElse(0)) + ")");
            } else if (!knownKeys.contains(key)) {
                errors.add(keyNode, unknownKey(key, where, knownKeys, suggested));
            } else {
                entries.put(key, tuple);
            }
        }
    }

    private static String unknownKey(String key, String where, List<String> knownKeys, Set<String> suggested) {
        String closest = null;
        int best = 3;
        for (String known : knownKeys) {
            int distance = editDistance(key, known);
            if (distance < best) {
                best = distance;
                closest = known;
            }
        }
        if (closest != null) {
            suggested.add(closest);
            return "unknown key " + shown(key) + " (did you mean " + NodeReader.quoted(closest) + "?)";
        }
        return "unknown key " + shown(key) + " in " + where + "; expected one of " + String.join(", ", knownKeys);
    }

    /**
     * A key as an error names it: quoted, unless it is as long as a token may be. No key the rule
     * file knows is that long, and a token indented one level too far, or a token list written as
     * a mapping ({@code tokens: {s3cr3t...: x}}), is read as a key: it must not reach the log.
     */
    private static String shown(String key) {
        if (key.length() >= TokenReader.MIN_TOKEN_LENGTH) {
            return "of " + key.length() + " characters (not shown: it may be a token)";
        }
        return NodeReader.quoted(key);
    }

    /** Levenshtein distance; the strings are short keys. */
    static int editDistance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    /** The mapping node itself, for errors about a missing key. */
    MappingNode node() {
        return node;
    }

    boolean has(String key) {
        return entries.containsKey(key);
    }

    /**
     * Whether {@code key} is absent and no unknown key was reported as a misspelling of it: a
     * required key's own "is missing" error is then worth giving. {@code limt: 5} is one mistake,
     * reported once (as an unknown key, with the suggestion), not again as a missing limit.
     */
    boolean lacks(String key) {
        return !entries.containsKey(key) && !suggested.contains(key);
    }

    /** The value of {@code key}, or null when it is absent. */
    Node get(String key) {
        NodeTuple tuple = entries.get(key);
        return tuple == null ? null : tuple.getValueNode();
    }

    /** The key node of {@code key}, or null when it is absent. */
    Node keyNode(String key) {
        NodeTuple tuple = entries.get(key);
        return tuple == null ? null : tuple.getKeyNode();
    }
}
