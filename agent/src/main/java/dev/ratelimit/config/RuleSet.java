package dev.ratelimit.config;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/** A validated rule file: every setting resolved, every default applied. Immutable. */
public final class RuleSet {

    /** The only rule file version this agent reads. */
    public static final int VERSION = 1;

    private final String source;
    private final int version;
    private final ExemptConfig exempt;
    private final ClientConfig client;
    private final StoreConfig store;
    private final List<RuleConfig> rules;
    private final Map<String, RuleConfig> byName;
    /** SHA-256 of the bytes these rules were read from; null when not read from a file. Not part of equality. */
    private byte[] contentDigest;
    /** Why these are no rules in place of the file's (on-config-error=disable), or null. Not part of equality. */
    private String refusal;

    RuleSet(String source, int version, ExemptConfig exempt, ClientConfig client, StoreConfig store,
            List<RuleConfig> rules) {
        this.source = Objects.requireNonNull(source, "source");
        this.version = version;
        this.exempt = Objects.requireNonNull(exempt, "exempt");
        this.client = Objects.requireNonNull(client, "client");
        this.store = Objects.requireNonNull(store, "store");
        this.rules = List.copyOf(rules);
        Map<String, RuleConfig> names = new LinkedHashMap<>();
        for (RuleConfig rule : this.rules) {
            if (names.putIfAbsent(rule.name(), rule) != null) {
                throw new IllegalArgumentException("two rules are named " + rule.name());
            }
        }
        this.byName = names;
    }

    /** SHA-256 of the rule file's bytes these rules were read from, or null. */
    public byte[] contentDigest() {
        return contentDigest == null ? null : contentDigest.clone();
    }

    RuleSet readFrom(byte[] digest) {
        this.contentDigest = digest.clone();
        return this;
    }

    /** No rules, no exempt tokens, default client and store settings. */
    public static RuleSet empty(String source) {
        return new RuleSet(source, VERSION, ExemptConfig.disabled(), ClientConfig.defaults(),
                StoreConfig.defaults(), List.of());
    }

    /**
     * No rules in place of a rule file refused at start-up under {@code on-config-error=disable}.
     *
     * @param why what was refused, for the reload outcome (no value from the file)
     */
    public static RuleSet refused(String source, String why) {
        RuleSet none = empty(source);
        none.refusal = Objects.requireNonNull(why, "why");
        return none;
    }

    /** Why the file's rules are not in force, for a {@link #refused} set; null otherwise. */
    public String refusal() {
        return refusal;
    }

    /** The rule file's path as the user gave it. */
    public String source() {
        return source;
    }

    /** The rule file's version; always 1 for now. */
    public int version() {
        return version;
    }

    /** The internal tokens that exempt callers. */
    public ExemptConfig exempt() {
        return exempt;
    }

    /** How HTTP clients are identified. */
    public ClientConfig client() {
        return client;
    }

    /** Where counters are kept. */
    public StoreConfig store() {
        return store;
    }

    /** The rules in file order. */
    public List<RuleConfig> rules() {
        return rules;
    }

    /** The rule named {@code name}, if there is one. */
    public Optional<RuleConfig> rule(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    @Override
    public String toString() {
        return source + " (version " + version + ", " + count(rules.size()) + ")";
    }

    /** "1 rule", "N rules". */
    public static String count(int rules) {
        return rules + (rules == 1 ? " rule" : " rules");
    }
}
