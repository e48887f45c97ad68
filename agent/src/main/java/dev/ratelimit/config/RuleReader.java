package dev.ratelimit.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

/** Reads one item of the rule file's {@code rules} list. */
final class RuleReader {

    private static final List<String> RULE_KEYS = List.of("name", "match", "key", "limit", "window", "limits",
            "algorithm", "mode", "on-reject", "exempt", "on-error");
    private static final List<String> MATCH_KEYS = List.of("http", "method");
    private static final List<String> HTTP_KEYS = List.of("path", "methods");
    private static final List<String> LIMIT_KEYS = List.of("limit", "window");

    /** What one rule item gave: its name (for the duplicate check) and the rule, when it is valid. */
    static final class Result {
        final String name;
        final Node nameNode;
        final RuleConfig rule;

        Result(String name, Node nameNode, RuleConfig rule) {
            this.name = name;
            this.nameNode = nameNode;
            this.rule = rule;
        }
    }

    private final NodeReader reader;
    private final ErrorList errors;
    private final OnError storeOnError;

    RuleReader(NodeReader reader, OnError storeOnError) {
        this.reader = reader;
        this.errors = reader.errors();
        this.storeOnError = storeOnError;
    }

    /** Reads the {@code number}th rule (1-based); the result's rule is null when there were errors. */
    Result read(Node node, int number) {
        int errorsBefore = errors.size();
        YamlMapping rule = reader.mapping(node, ruleLabel(node, number), RULE_KEYS);
        if (rule == null) {
            return new Result(null, null, null);
        }
        String name = null;
        Node nameNode = null;
        if (rule.lacks("name")) {
            errors.add(rule.node(), "rule " + number + " needs a name");
        } else if (rule.has("name")) {
            String text = reader.text(rule.get("name"), "name");
            if (text != null) {
                try {
                    RuleConfig.checkName(text);
                    name = text;
                    nameNode = rule.get("name");
                } catch (IllegalArgumentException e) {
                    errors.add(rule.get("name"), e.getMessage());
                }
            }
        }
        String label = name == null ? "rule " + number : "rule " + NodeReader.quoted(name);

        HttpMatch http = null;
        MethodPattern method = null;
        if (rule.has("match")) {
            YamlMapping match = reader.mapping(rule.get("match"), "match", MATCH_KEYS);
            if (match != null && match.has("http") && match.has("method")) {
                errors.add(match.keyNode("method"), "match takes http or method, not both; write two rules");
            } else if (match != null && match.has("http")) {
                http = readHttp(match.get("http"));
            } else if (match != null && match.has("method")) {
                method = readMethod(match.get("method"));
            } else if (match != null && match.lacks("http") && match.lacks("method")) {
                errors.add(rule.get("match"), "match needs http (requests) or method (Class#method);"
                        + " leave match out for a rule named by @RateLimited");
            }
        }

        KeySpec key = rule.has("key") ? readKey(rule.get("key")) : KeySpec.global();
        if (http != null && key != null && key.usesArguments()) {
            errors.add(rule.get("key"), "an http rule has no method arguments to count by; argN keys work on"
                    + " method rules and @RateLimited methods");
        }

        List<LimitSpec> limits = readLimits(rule, label);

        Algorithm algorithm = Algorithm.FIXED_WINDOW;
        if (rule.has("algorithm")) {
            algorithm = reader.choice(rule.get("algorithm"), "algorithm", Algorithm.values(),
                    Algorithm::yamlName, Algorithm::fromYaml);
        }
        Mode mode = Mode.ENFORCE;
        if (rule.has("mode")) {
            mode = reader.choice(rule.get("mode"), "mode", Mode.values(), Mode::yamlName, Mode::fromYaml);
        }
        OnReject onReject = OnReject.THROW;
        if (rule.has("on-reject")) {
            onReject = reader.choice(rule.get("on-reject"), "on-reject", OnReject.values(),
                    OnReject::yamlName, OnReject::fromYaml);
            if (http != null && onReject == OnReject.RETURN_DEFAULT) {
                errors.add(rule.get("on-reject"), "on-reject: return-default is for method rules;"
                        + " an http rule always answers 429 Too Many Requests");
            }
        }
        Boolean exempt = Boolean.TRUE;
        if (rule.has("exempt")) {
            exempt = reader.bool(rule.get("exempt"), "exempt");
        }
        OnError onError = storeOnError;
        if (rule.has("on-error")) {
            onError = reader.choice(rule.get("on-error"), "on-error", OnError.values(),
                    OnError::yamlName, OnError::fromYaml);
        }

        if (errors.size() > errorsBefore) {
            return new Result(name, nameNode, null);
        }
        int line = node.getStartMark().map(m -> m.getLine() + 1).orElse(0);
        int column = node.getStartMark().map(m -> m.getColumn() + 1).orElse(0);
        return new Result(name, nameNode, new RuleConfig(name, http, method, key, limits, algorithm, mode,
                onReject, exempt, onError, line, column));
    }

    /** {@code rule 'api-per-ip'} when the item has a plain name, else {@code rule 3}. */
    private static String ruleLabel(Node node, int number) {
        if (node instanceof MappingNode) {
            for (NodeTuple tuple : ((MappingNode) node).getValue()) {
                if (tuple.getKeyNode() instanceof ScalarNode && tuple.getValueNode() instanceof ScalarNode
                        && ((ScalarNode) tuple.getKeyNode()).getValue().equals("name")) {
                    return "rule " + NodeReader.quoted(((ScalarNode) tuple.getValueNode()).getValue());
                }
            }
        }
        return "rule " + number;
    }

    private HttpMatch readHttp(Node node) {
        // counted before the mapping is read: a misspelt path (pth:) is reported there, not below
        int errorsBefore = errors.size();
        YamlMapping http = reader.mapping(node, "match.http", HTTP_KEYS);
        if (http == null) {
            return null;
        }
        List<String> paths = new ArrayList<>();
        if (http.lacks("path")) {
            errors.add(http.node(), "match.http needs a path, such as /api/** (or a list of paths)");
        } else if (http.has("path")) {
            for (Node item : nonEmpty(http.get("path"), "match.http.path")) {
                String path = reader.text(item, "match.http.path");
                if (path != null) {
                    try {
                        HttpMatch.checkPath(path);
                        paths.add(path);
                    } catch (IllegalArgumentException e) {
                        errors.add(item, e.getMessage());
                    }
                }
            }
        }
        List<String> methods = new ArrayList<>();
        if (http.has("methods")) {
            for (Node item : nonEmpty(http.get("methods"), "match.http.methods")) {
                String text = reader.text(item, "match.http.methods");
                if (text != null && !HttpTokens.isToken(text)) {
                    errors.add(item, "invalid HTTP method " + NodeReader.quoted(text) + "; expected a method name such as GET or POST");
                } else if (text != null) {
                    methods.add(text);
                }
            }
        }
        if (errors.size() > errorsBefore) {
            return null;
        }
        return HttpMatch.of(paths, methods);
    }

    /** The items of a list or a single value; an empty list is reported and gives no items. */
    private List<Node> nonEmpty(Node node, String what) {
        List<Node> items = reader.oneOrMany(node);
        if (items.isEmpty()) {
            errors.add(node, what + " is an empty list; give at least one value");
        }
        return items;
    }

    private MethodPattern readMethod(Node node) {
        String text = reader.text(node, "match.method");
        if (text == null) {
            return null;
        }
        try {
            return MethodPattern.parse(text);
        } catch (IllegalArgumentException e) {
            errors.add(node, e.getMessage());
            return null;
        }
    }

    private KeySpec readKey(Node node) {
        if (node instanceof SequenceNode) {
            List<Node> items = nonEmpty(node, "key");
            List<String> parts = new ArrayList<>();
            boolean valid = !items.isEmpty();
            for (Node item : items) {
                String text = reader.text(item, "a key");
                if (text == null) {
                    valid = false;
                    continue;
                }
                try {
                    KeyPart.parse(text);
                    parts.add(text);
                } catch (IllegalArgumentException e) {
                    errors.add(item, e.getMessage());
                    valid = false;
                }
            }
            return valid ? keyOf(node, () -> KeySpec.of(parts)) : null;
        }
        String text = reader.text(node, "key");
        return text == null ? null : keyOf(node, () -> KeySpec.parse(text));
    }

    private KeySpec keyOf(Node node, Supplier<KeySpec> parse) {
        try {
            return parse.get();
        } catch (IllegalArgumentException e) {
            errors.add(node, e.getMessage());
            return null;
        }
    }

    private List<LimitSpec> readLimits(YamlMapping rule, String label) {
        boolean single = rule.has("limit") || rule.has("window");
        if (rule.has("limits")) {
            if (single) {
                errors.add(rule.keyNode("limits"), "give either limit and window, or limits, not both");
                return List.of();
            }
            List<LimitSpec> limits = new ArrayList<>();
            List<Node> items = reader.list(rule.get("limits"), "limits");
            if (items != null && items.isEmpty()) {
                errors.add(rule.get("limits"), "limits is an empty list; give at least one {limit, window}");
            }
            for (Node item : items == null ? List.<Node>of() : items) {
                YamlMapping pair = reader.mapping(item, "an item of limits", LIMIT_KEYS);
                if (pair != null) {
                    LimitSpec limit = readLimit(pair, "this item of limits");
                    if (limit != null && limits.stream().anyMatch(known -> known.window().equals(limit.window()))) {
                        // the limits of a rule are told apart by their window (policy names,
                        // Redis keys); of two in one window only the lower could ever decide
                        errors.add(pair.get("window"), "two limits of this rule have the window "
                                + Durations.format(limit.window()) + "; give each window one limit");
                    } else if (limit != null) {
                        limits.add(limit);
                    }
                }
            }
            return limits;
        }
        if (!single) {
            if (rule.lacks("limit") && rule.lacks("window") && rule.lacks("limits")) {
                errors.add(rule.node(), label + " needs a limit and a window (limit: 100, window: 1m),"
                        + " or limits (a list of them)");
            } else if (rule.lacks("limits")) {
                // limit or window misspelt (reported as such): still say if the other is missing
                readLimit(rule, label);
            }
            return List.of();
        }
        LimitSpec limit = readLimit(rule, label);
        return limit == null ? List.of() : List.of(limit);
    }

    /** {@code limit} and {@code window} from {@code mapping}, both required. */
    private LimitSpec readLimit(YamlMapping mapping, String label) {
        Long limit = mapping.has("limit") ? reader.wholeNumber(mapping.get("limit"), "limit", 1, Long.MAX_VALUE) : null;
        Duration window = mapping.has("window") ? reader.duration(mapping.get("window"), "window") : null;
        if (!mapping.has("limit") || !mapping.has("window")) {
            // a key misspelt (limt:) was reported with a suggestion; say only what is really missing
            String missing = mapping.lacks("limit") ? "limit" : mapping.lacks("window") ? "window" : null;
            if (missing != null) {
                String present = missing.equals("limit") ? "window" : "limit";
                Node at = mapping.has(present) ? mapping.keyNode(present) : mapping.node();
                errors.add(at, label + " needs both limit and window; " + missing + " is missing");
            }
            return null;
        }
        return limit == null || window == null ? null : new LimitSpec(limit, window);
    }
}
