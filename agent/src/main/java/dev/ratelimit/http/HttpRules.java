package dev.ratelimit.http;

import dev.ratelimit.config.HttpMatch;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.limit.ActiveRule;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The HTTP side of one loaded rule set: the rules with {@code match: http}, how clients are
 * identified, and how the internal token is checked. Immutable; replaced as a whole on reload.
 */
public final class HttpRules {
    private static final ActiveRule[] NONE = new ActiveRule[0];
    private static final int[] NO_MATCH = new int[0];

    private final ActiveRule[] rules;
    private final RateLimitFields[] fields;
    private final ClientAddressResolver clients;
    private final TokenVerifier tokens;
    private final String exemptHeader;
    private final Function<String, ActiveRule> byName;
    private final Map<String, RateLimitFields> fieldsByName = new ConcurrentHashMap<>();

    /**
     * @param ruleSet the loaded file
     * @param httpRules the loaded rules that have {@code match: http}, in file order
     * @param byName finds any loaded rule by name (method and inline rules too), or null
     */
    public HttpRules(RuleSet ruleSet, Collection<ActiveRule> httpRules, Function<String, ActiveRule> byName) {
        this.rules = httpRules.toArray(NONE);
        this.fields = new RateLimitFields[rules.length];
        for (int i = 0; i < rules.length; i++) {
            fields[i] = new RateLimitFields(rules[i].config());
            fieldsByName.put(rules[i].name(), fields[i]);
        }
        this.clients = new ClientAddressResolver(ruleSet.client());
        this.tokens = new TokenVerifier(ruleSet.exempt());
        this.exemptHeader = ruleSet.exempt().isEnabled() ? ruleSet.exempt().header() : null;
        this.byName = byName;
    }

    /** The header that carries internal tokens, or null when there is none. */
    String exemptHeader() {
        return exemptHeader;
    }

    ClientAddressResolver clients() {
        return clients;
    }

    /**
     * The token verdict of a request: read only when an exempt header is configured, and every
     * line of the header only when it is there at all (most requests do not carry it).
     */
    TokenVerifier.Verdict verdict(ServletApi api, Object request) {
        if (exemptHeader == null || api.header(request, exemptHeader) == null) {
            return TokenVerifier.Verdict.NONE;
        }
        return tokens.verify(api.headers(request, exemptHeader));
    }

    boolean isEmpty() {
        return rules.length == 0;
    }

    /**
     * Indexes into {@link #rule(int)} of the rules matching a request by its normalised path or,
     * when not null, by the path the container routed it by or by its path with the dot segments
     * kept ({@link RequestPath#literal}): a rule covers a request if it covers any of them. In
     * file order, each once.
     */
    int[] matching(String method, String path, String routed, String literal) {
        int[] matched = null;
        int count = 0;
        for (int i = 0; i < rules.length; i++) {
            HttpMatch match = rules[i].config().httpMatch();
            if (match.matches(method, path) || routed != null && match.matches(method, routed)
                    || literal != null && match.matches(method, literal)) {
                if (matched == null) {
                    matched = new int[rules.length];
                }
                matched[count++] = i;
            }
        }
        if (matched == null) {
            return NO_MATCH;
        }
        int[] exact = new int[count];
        System.arraycopy(matched, 0, exact, 0, count);
        return exact;
    }

    ActiveRule rule(int index) {
        return rules[index];
    }

    RateLimitFields fields(int index) {
        return fields[index];
    }

    /** The response fields of any rule by name, for a rejection thrown by a method rule. */
    RateLimitFields fields(String name) {
        RateLimitFields known = fieldsByName.get(name);
        if (known != null) {
            return known;
        }
        ActiveRule rule = byName.apply(name);
        return rule == null ? null : fieldsByName.computeIfAbsent(name, n -> new RateLimitFields(rule.config()));
    }

    /** The loaded HTTP rules' names, for logs. */
    List<String> names() {
        List<String> names = new ArrayList<>();
        for (ActiveRule rule : rules) {
            names.add(rule.name());
        }
        return names;
    }
}
