package dev.ratelimit.config;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.Tag;

/**
 * Turns the composed YAML of a version 1 rule file into a {@link RuleSet}, collecting every error
 * with the position of the node at fault. Sections that fail are replaced by their defaults only to
 * carry on checking; a file with any error never yields a RuleSet.
 */
final class RuleFileReader {

    private static final List<String> TOP_KEYS = List.of("version", "exempt", "client", "store", "rules");
    private static final List<String> EXEMPT_KEYS = List.of("header", "tokens");
    private static final List<String> CLIENT_KEYS = List.of("trusted-proxies", "ipv6-prefix");
    private static final List<String> STORE_KEYS = List.of("type", "max-keys", "on-error", "redis");
    private static final List<String> REDIS_KEYS = List.of("uri", "timeout", "key-prefix");

    private final String fileName;
    private final ErrorList errors;
    private final NodeReader reader;
    private final TokenReader tokens;

    private RuleFileReader(String fileName, Path baseDir, Function<String, String> env) {
        this.fileName = fileName;
        this.errors = new ErrorList(fileName);
        this.reader = new NodeReader(errors);
        this.tokens = new TokenReader(reader, baseDir, env);
    }

    static RuleSet read(Node root, String fileName, Path baseDir, Function<String, String> env)
            throws ConfigException {
        return new RuleFileReader(fileName, baseDir, env).read(root);
    }

    private RuleSet read(Node root) throws ConfigException {
        if (!(root instanceof MappingNode)) {
            errors.add(root, "the rule file must be a mapping with the keys " + String.join(", ", TOP_KEYS)
                    + ", not " + NodeReader.describe(root));
            errors.throwIfAny();
        }
        checkVersion((MappingNode) root);
        YamlMapping top = new YamlMapping((MappingNode) root, "the rule file", TOP_KEYS, errors);
        ExemptConfig exempt = top.has("exempt") ? readExempt(top.get("exempt")) : ExemptConfig.disabled();
        ClientConfig client = top.has("client") ? readClient(top.get("client")) : ClientConfig.defaults();
        StoreConfig store = top.has("store") ? readStore(top.get("store")) : StoreConfig.defaults();
        List<RuleConfig> rules = top.has("rules") ? readRules(top.get("rules"), store.onError()) : List.of();
        errors.throwIfAny();
        return new RuleSet(fileName, RuleSet.VERSION, exempt, client, store, rules);
    }

    /**
     * Checked before anything else: a file of another version is written in a format this agent
     * does not know, so its other errors would only be noise.
     */
    private void checkVersion(MappingNode root) throws ConfigException {
        for (NodeTuple tuple : root.getValue()) {
            Node key = tuple.getKeyNode();
            if (key instanceof ScalarNode && ((ScalarNode) key).getValue().equals("version")) {
                Node value = tuple.getValueNode();
                if (value instanceof ScalarNode && value.getTag().equals(Tag.INT)) {
                    String text = ((ScalarNode) value).getValue();
                    if (!text.equals(String.valueOf(RuleSet.VERSION))) {
                        errors.add(value, "this agent reads rule files of version 1; this file is version " + NodeReader.cut(text)
                                + " (use a newer agent, or write the file in the version 1 format)");
                        errors.throwIfAny();
                    }
                } else {
                    // a decimal is shown (1.0, which read "not a number"); text is not, even tagged
                    // !!float: it may be a token
                    boolean decimal = value instanceof ScalarNode && value.getTag().equals(Tag.FLOAT)
                            && ((ScalarNode) value).getValue().matches(
                                    "[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN)");
                    errors.add(value, "version must be the number 1, not " + (decimal
                            ? "the decimal " + NodeReader.cut(((ScalarNode) value).getValue())
                            : NodeReader.describe(value)));
                }
                return;
            }
        }
        errors.add(root, "the rule file must start with 'version: 1'");
    }

    private ExemptConfig readExempt(Node node) {
        YamlMapping exempt = reader.mapping(node, "exempt", EXEMPT_KEYS);
        if (exempt == null) {
            return ExemptConfig.disabled();
        }
        String header = null;
        if (exempt.lacks("header")) {
            errors.add(exempt.node(), "exempt needs a header: the request header that carries the token,"
                    + " such as X-Internal-Token");
        } else if (exempt.has("header")) {
            String text = reader.text(exempt.get("header"), "exempt.header");
            if (text != null && !HttpTokens.isToken(text)) {
                errors.add(exempt.get("header"), "exempt.header must be an HTTP header name (letters, digits"
                        + " and !#$%&'*+-.^_`|~), such as X-Internal-Token");
            } else {
                header = text;
            }
        }
        List<TokenSource> sources = new ArrayList<>();
        if (exempt.lacks("tokens")) {
            errors.add(exempt.node(), "exempt needs tokens: a list of ${env:NAME}, ${file:PATH} or sha256:HEX");
        } else if (exempt.has("tokens")) {
            List<Node> items = reader.list(exempt.get("tokens"), "exempt.tokens");
            if (items != null && items.isEmpty()) {
                errors.add(exempt.get("tokens"), "exempt.tokens is empty; give at least one token,"
                        + " or remove the exempt section");
            } else if (items != null) {
                for (Node item : items) {
                    TokenSource source = tokens.token(item);
                    if (source != null) {
                        sources.add(source);
                    }
                }
            }
        }
        if (header != null && isOneOf(header, sources)) {
            // check prints the header: never a token pasted there
            errors.add(exempt.get("header"), "exempt.header is one of the tokens; the header name is words such"
                    + " as X-Internal-Token, and the token goes under tokens only");
            header = null;
        }
        return new ExemptConfig(header, sources);
    }

    /** Whether {@code header}, as written or in either case, is one of the tokens. */
    private static boolean isOneOf(String header, List<TokenSource> sources) {
        for (String spelling : new String[] {header, header.toLowerCase(Locale.ROOT), header.toUpperCase(Locale.ROOT)}) {
            byte[] digest = TokenSource.sha256(spelling.getBytes(StandardCharsets.US_ASCII));
            for (TokenSource source : sources) {
                if (MessageDigest.isEqual(digest, source.digest())) {
                    return true;
                }
            }
        }
        return false;
    }

    private ClientConfig readClient(Node node) {
        YamlMapping client = reader.mapping(node, "client", CLIENT_KEYS);
        if (client == null) {
            return ClientConfig.defaults();
        }
        List<Cidr> proxies = new ArrayList<>();
        if (client.has("trusted-proxies")) {
            List<Node> items = reader.list(client.get("trusted-proxies"), "client.trusted-proxies");
            for (Node item : items == null ? List.<Node>of() : items) {
                String text = reader.text(item, "a trusted proxy");
                if (text != null) {
                    try {
                        proxies.add(Cidr.parse(text));
                    } catch (IllegalArgumentException e) {
                        errors.add(item, e.getMessage());
                    }
                }
            }
        }
        int prefix = ClientConfig.DEFAULT_IPV6_PREFIX;
        if (client.has("ipv6-prefix")) {
            Long value = reader.wholeNumber(client.get("ipv6-prefix"), "client.ipv6-prefix", 1, 128);
            if (value != null) {
                prefix = value.intValue();
            }
        }
        return new ClientConfig(proxies, prefix);
    }

    private StoreConfig readStore(Node node) {
        YamlMapping store = reader.mapping(node, "store", STORE_KEYS);
        if (store == null) {
            return StoreConfig.defaults();
        }
        StoreConfig.Type type = StoreConfig.Type.LOCAL;
        if (store.has("type")) {
            StoreConfig.Type value = reader.choice(store.get("type"), "store.type", StoreConfig.Type.values(),
                    StoreConfig.Type::yamlName, StoreConfig.Type::fromYaml);
            type = value == null ? type : value;
        }
        long maxKeys = StoreConfig.DEFAULT_MAX_KEYS;
        if (store.has("max-keys")) {
            Long value = reader.wholeNumber(store.get("max-keys"), "store.max-keys", 1, Long.MAX_VALUE);
            maxKeys = value == null ? maxKeys : value;
        }
        OnError onError = OnError.ALLOW;
        if (store.has("on-error")) {
            OnError value = reader.choice(store.get("on-error"), "store.on-error", OnError.values(),
                    OnError::yamlName, OnError::fromYaml);
            onError = value == null ? onError : value;
        }
        RedisConfig redis = store.has("redis") ? readRedis(store.get("redis")) : null;
        if (type == StoreConfig.Type.REDIS && redis == null) {
            if (store.lacks("redis")) {
                errors.add(store.get("type"), "type: redis needs a store.redis section with at least a uri");
            }
            // the error is recorded (here or in the section), so the file is refused; carry on checking
            type = StoreConfig.Type.LOCAL;
        }
        return new StoreConfig(type, maxKeys, onError, redis);
    }

    private RedisConfig readRedis(Node node) {
        YamlMapping redis = reader.mapping(node, "store.redis", REDIS_KEYS);
        if (redis == null) {
            return null;
        }
        String uri = null;
        if (redis.lacks("uri")) {
            errors.add(redis.node(), "store.redis needs a uri, such as redis://127.0.0.1:6379/0");
        } else if (redis.has("uri")) {
            String text = reader.text(redis.get("uri"), "store.redis.uri");
            String substituted = text == null ? null
                    : tokens.substituteEnvironment(redis.get("uri"), text, "store.redis.uri");
            // the URI may hold a password, so the message never repeats it
            String problem = substituted == null ? null : RedisConfig.uriProblem(substituted);
            if (problem != null) {
                errors.add(redis.get("uri"), "store.redis.uri " + problem);
            } else {
                uri = substituted;
            }
        }
        Duration timeout = RedisConfig.DEFAULT_TIMEOUT;
        if (redis.has("timeout")) {
            Duration value = reader.duration(redis.get("timeout"), "store.redis.timeout");
            String problem = value == null ? null : RedisConfig.timeoutProblem(value);
            if (problem != null) {
                errors.add(redis.get("timeout"), "store.redis.timeout " + problem);
            } else {
                timeout = value == null ? timeout : value;
            }
        }
        String keyPrefix = RedisConfig.DEFAULT_KEY_PREFIX;
        if (redis.has("key-prefix")) {
            String value = reader.text(redis.get("key-prefix"), "store.redis.key-prefix");
            if (value != null && (value.indexOf('{') >= 0 || value.indexOf('}') >= 0)) {
                // the agent puts a Redis Cluster hash tag after the prefix; braces here would move it
                errors.add(redis.get("key-prefix"), "store.redis.key-prefix must not contain { or }");
            } else {
                keyPrefix = value == null ? keyPrefix : value;
            }
        }
        return uri == null ? null : new RedisConfig(uri, timeout, keyPrefix);
    }

    private List<RuleConfig> readRules(Node node, OnError storeOnError) {
        if (node instanceof ScalarNode && node.getTag().equals(Tag.NULL)) {
            return List.of();
        }
        List<Node> items = reader.list(node, "rules");
        if (items == null) {
            return List.of();
        }
        RuleReader ruleReader = new RuleReader(reader, storeOnError);
        Map<String, Node> names = new HashMap<>();
        Map<String, Node> namedItems = new HashMap<>();
        List<RuleConfig> rules = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            Node item = items.get(i);
            RuleReader.Result result = ruleReader.read(item, i + 1);
            if (result.nameNode != null) {
                Node first = names.putIfAbsent(result.name, result.nameNode);
                if (first == null) {
                    namedItems.put(result.name, item);
                } else {
                    int line = first.getStartMark().map(m -> m.getLine() + 1).orElse(0);
                    String duplicate = "duplicate rule name " + NodeReader.quoted(result.name);
                    if (first != result.nameNode) {
                        errors.add(result.nameNode, duplicate + " (first used on line " + line + ")");
                    } else if (namedItems.get(result.name) == item) {
                        // an alias (*a) of a whole rule is the anchored node itself, with the
                        // anchor's position: name the item, or the message said line 3 repeated line 3
                        errors.add(first, duplicate + ": item " + (i + 1) + " of rules is an alias of the rule on line "
                                + line + "; each rule needs a name of its own");
                    } else {
                        // the item is a rule of its own whose name is the first one's, through an
                        // alias (name: *n) or a merge (<<: *a): its own position says where
                        errors.add(item, duplicate + ": item " + (i + 1) + " of rules takes the name on line "
                                + line + " through an alias or a merge (<<); each rule needs a name of its own");
                    }
                    continue;
                }
            }
            if (result.rule != null) {
                rules.add(result.rule);
            }
        }
        refusePolicyNameClashes(rules, names);
        return rules;
    }

    /**
     * A rule with several limits advertises one policy per limit, named {@code RULE-WINDOW}
     * ({@code send-1m}): a rule of that very name would put two policies of one name, with
     * different quotas, in the RateLimit-Policy field, and its RateLimit item would name both.
     */
    private void refusePolicyNameClashes(List<RuleConfig> rules, Map<String, Node> names) {
        for (RuleConfig rule : rules) {
            List<LimitSpec> limits = rule.limits();
            if (limits.size() < 2) {
                continue;
            }
            for (LimitSpec limit : limits) {
                String policy = rule.name() + '-' + Durations.format(limit.window());
                Node clash = names.get(policy);
                if (clash != null) {
                    Node owner = names.get(rule.name());
                    String where = owner == null ? ""
                            : owner.getStartMark().map(m -> " (line " + (m.getLine() + 1) + ")").orElse("");
                    errors.add(clash, "rule name " + NodeReader.quoted(policy) + " is also the name of the policy of rule '"
                            + rule.name() + "'" + where + " for its " + Durations.format(limit.window())
                            + " limit in the RateLimit-Policy field; rename one of the rules");
                }
            }
        }
    }
}
