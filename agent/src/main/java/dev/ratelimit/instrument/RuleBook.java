package dev.ratelimit.instrument;

import dev.ratelimit.config.Durations;
import dev.ratelimit.config.KeySpec;
import dev.ratelimit.config.LimitSpec;
import dev.ratelimit.config.OnError;
import dev.ratelimit.config.RuleConfig;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.http.HttpRules;
import dev.ratelimit.limit.ActiveRule;
import dev.ratelimit.store.LimiterFactory;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

/**
 * The loaded rules: the rule file's rules by name, and the rules declared inline by
 * {@code @RateLimited} attributes, created when their first method is instrumented. Decides
 * which rules apply to an instrumented method.
 */
final class RuleBook {
    private static final System.Logger LOG = System.getLogger("dev.ratelimit");

    private final RuleSet ruleSet;
    private final Map<String, ActiveRule> byName = new LinkedHashMap<>();
    /**
     * The rules of the book before this one that this one dropped or changed, kept for one more
     * reload: a slow in-place write ({@code slow-command > rules.yaml}) can be caught with some
     * rules written and others not yet, a valid file that drops them, or cuts one short
     * ({@code limit: 1} of {@code limit: 10}); the next version brings them back unchanged, and
     * they count on where they were rather than afresh.
     */
    private final Map<String, ActiveRule> dropped = new LinkedHashMap<>();
    private final List<ActiveRule> methodRules = new ArrayList<>();
    private final Map<String, ActiveRule> inline = new ConcurrentHashMap<>();
    /**
     * Inline rules out of force because the file defines a rule of their name (an override),
     * kept with their counters for as long as it does: when the file's rule goes, the inline rule
     * counts on where it stood.
     */
    private final Map<String, ActiveRule> overridden = new ConcurrentHashMap<>();
    /**
     * The warnings said, each with what it was about: the rule's settings it named (a
     * {@link RuleConfig}), the name of a rule it found missing (a {@link String}), or
     * {@link #STANDS} for one about the method's annotation alone. A reload carries over those
     * whose cause is unchanged, so a warning is said once, and again when it comes back.
     */
    private final Map<String, Object> warned = new ConcurrentHashMap<>();
    private static final Object STANDS = new Object();
    private final HttpRules http;
    private final LimiterFactory limiters;
    private final Runnable onNewRule;

    /**
     * Loads the rules of a rule set.
     *
     * @param previous the rules in force before a reload, or null: a rule that has not changed
     *     (same settings, same store) keeps its counters and metrics
     * @param onNewRule called after an inline rule is created, outside any lock
     */
    RuleBook(RuleSet ruleSet, LimiterFactory limiters, RuleBook previous, Runnable onNewRule) {
        this.ruleSet = ruleSet;
        this.limiters = limiters;
        this.onNewRule = onNewRule;
        boolean sameStore = previous != null && previous.limiters == limiters;
        List<ActiveRule> httpRules = new ArrayList<>();
        for (RuleConfig config : ruleSet.rules()) {
            ActiveRule kept = sameStore ? previous.sameRule(config) : null;
            ActiveRule rule;
            if (kept != null && kept.config().equals(config)) {
                rule = kept;
            } else if (kept != null) {
                // only its on-error changed (the store's default, say): it counts on
                rule = kept.withOnError(config);
            } else {
                rule = new ActiveRule(config, limiters.create(config));
            }
            byName.put(config.name(), rule);
            if (config.methodPattern() != null) {
                methodRules.add(rule);
            }
            if (config.httpMatch() != null) {
                httpRules.add(rule);
            }
        }
        if (sameStore) {
            previous.byName.forEach((name, rule) -> {
                ActiveRule now = byName.get(name);
                if (now == null || now.id() != rule.id()) {
                    dropped.put(name, rule);
                }
            });
        }
        takeInlineRules(previous);
        if (previous != null) {
            // said once, not again at every reload that still finds it so (the soak: 77 lines);
            // said again once the cause went away and came back, or changed
            previous.warned.forEach((what, cause) -> {
                if (stands(cause)) {
                    warned.put(what, cause);
                }
            });
        }
        this.http = new HttpRules(ruleSet, httpRules, this::rule);
    }

    /**
     * The rule of this book, or one the reload that made it dropped or changed, with the name
     * and settings of {@code config} (its on-error aside); null if neither.
     */
    private ActiveRule sameRule(RuleConfig config) {
        for (ActiveRule rule : new ActiveRule[] {byName.get(config.name()), dropped.get(config.name())}) {
            if (rule != null && rule.config().withOnError(config.onError()).equals(config)) {
                return rule;
            }
        }
        return null;
    }

    /**
     * Takes over the inline rules of {@code previous}, the rules in force before a reload, whose
     * names the file does not define, when both count in the same store: they count on. Called as
     * the book is made, and again by {@link MethodSites#rebind} under its lock as the book is put
     * in force, so that an inline rule made in between (a class loaded during the reload) is
     * taken over too: made a second time here, it started from nothing, and the calls counted on
     * the first were lost (review of the twenty-third round). A rule this book has already is
     * kept.
     *
     * <p>An inline rule whose name the file now defines is kept aside, out of force, and comes
     * back with its counters once the file no longer defines it: an override added and removed
     * again gave every key of the method a fresh budget (method review, fortieth round).
     */
    void takeInlineRules(RuleBook previous) {
        if (previous == null || previous == this || previous.limiters != limiters) {
            return;
        }
        // an inline rule takes the store's on-error when it is made: one made under another
        // default takes the new one, and counts on
        OnError onError = ruleSet.store().onError();
        BiConsumer<String, ActiveRule> take = (name, rule) -> {
            if (byName.containsKey(name)) {
                overridden.putIfAbsent(name, rule);
            } else {
                inline.computeIfAbsent(name, taken -> rule.config().onError() == onError
                        ? rule : rule.withOnError(rule.config().withOnError(onError)));
            }
        };
        previous.inline.forEach(take);
        previous.overridden.forEach(take);
    }

    /** {@code 3 rules: api-per-ip (http /api/**), send (method a.B#send), report (named)}, for logs. */
    String describe() {
        StringBuilder text = new StringBuilder(RuleSet.count(byName.size()));
        String separator = ": ";
        for (ActiveRule rule : byName.values()) {
            RuleConfig config = rule.config();
            text.append(separator).append(rule.name()).append(" (")
                    .append(config.httpMatch() != null ? config.httpMatch().toString()
                            : config.methodPattern() != null ? "method " + config.methodPattern() : "named")
                    .append(')');
            separator = ", ";
        }
        return text.toString();
    }

    LimiterFactory limiters() {
        return limiters;
    }

    /** The names of every rule of the file and every inline rule created so far. */
    List<String> names() {
        List<String> names = new ArrayList<>(byName.keySet());
        names.addAll(inline.keySet());
        return names;
    }

    /** Whether a rule now bound to this method keys on arguments its advice does not pass. */
    boolean needsArguments(MethodSite site) {
        if (site.passesArguments) {
            return false;
        }
        for (ActiveRule rule : rulesFor(site.withArguments())) {
            if (rule.usesArguments()) {
                return true;
            }
        }
        return false;
    }

    /** The HTTP side of these rules. */
    HttpRules http() {
        return http;
    }

    /** A rule of the file, or an inline rule created so far, by name; null if none. */
    ActiveRule rule(String name) {
        ActiveRule rule = byName.get(name);
        return rule != null ? rule : inline.get(name);
    }

    RuleSet ruleSet() {
        return ruleSet;
    }

    /** Whether some rule of the file names methods of this class. */
    boolean namesClass(String className) {
        for (ActiveRule rule : methodRules) {
            if (rule.config().methodPattern().matchesClass(className)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The method patterns of the file's rules that name methods of this class, as written: a
     * loaded class is retransformed on reload when they change (a rule naming another of its
     * methods needs that method woven).
     */
    Set<String> patternsNaming(String className) {
        Set<String> patterns = new HashSet<>();
        for (ActiveRule rule : methodRules) {
            if (rule.config().methodPattern().matchesClass(className)) {
                patterns.add(rule.config().methodPattern().toString());
            }
        }
        return patterns;
    }

    /** Whether some rule of the file names this method. */
    boolean namesMethod(String className, String methodName) {
        for (ActiveRule rule : methodRules) {
            if (matches(rule, className, methodName)) {
                return true;
            }
        }
        return false;
    }

    private static boolean matches(ActiveRule rule, String className, String methodName) {
        return rule.config().methodPattern().matchesClass(className)
                && rule.config().methodPattern().matchesMethod(methodName);
    }

    /** The rules that apply to a method, in the order they are checked. */
    ActiveRule[] rulesFor(MethodSite site) {
        List<ActiveRule> rules = new ArrayList<>(1);
        for (ActiveRule rule : methodRules) {
            if (site.patternsApply && matches(rule, site.className, site.methodName)) {
                rules.add(rule);
            }
        }
        if (site.annotation != null) {
            ActiveRule rule = annotated(site);
            if (rule != null && !rules.contains(rule)) {
                rules.add(rule);
            }
        }
        // a rule keyed on an argument the method does not have cannot count its calls: said once,
        // loudly, rather than letting every call through as an agent error (or, for a method
        // without parameters, silently)
        rules.removeIf(rule -> {
            int needed = rule.config().key().argumentsNeeded();
            if (needed > site.parameterCount) {
                if (site.id >= 0) { // a probe of the transformer's is not a method bound yet
                    warnOnce("arity:" + rule.name() + ":" + site + ":" + site.parameterCount, rule.config(),
                            "rule '" + rule.name()
                            + "' keys on arg" + (needed - 1) + ", but " + site + " takes " + site.parameterCount
                            + (site.parameterCount == 1 ? " parameter" : " parameters")
                            + ": the rule does not limit its calls");
                }
                return true;
            }
            return false;
        });
        // a rule keyed on arguments cannot apply to a method instrumented without them; the
        // reload that brought the rule retransforms the method's class
        rules.removeIf(rule -> rule.usesArguments() && !site.passesArguments);
        return rules.toArray(new ActiveRule[0]);
    }

    private ActiveRule annotated(MethodSite site) {
        MethodSite.AnnotationValues values = site.annotation;
        if (!values.ruleName.isEmpty()) {
            ActiveRule rule = byName.get(values.ruleName);
            if (rule == null) {
                // a file refused under on-config-error=disable may well hold the rule: say why it is
                // not in force, not that the file lacks it (the SPEC audit of the thirty-seventh round)
                String refusal = ruleSet.refusal();
                warnOnce("missing:" + values.ruleName, values.ruleName, "@RateLimited(\"" + values.ruleName + "\") on " + site
                        + (refusal == null ? " names no rule in " + ruleSet.source()
                                : " names a rule, but none of the rules of " + ruleSet.source() + " is in force (" + refusal
                                        + "; on-config-error=disable)")
                        + "; the method is not limited");
            }
            return rule;
        }
        ActiveRule rule = byName.get(site.defaultRuleName);
        if (rule != null) {
            return rule;
        }
        rule = inline.get(site.defaultRuleName);
        if (rule == null) {
            rule = inline.computeIfAbsent(site.defaultRuleName, name -> inlineRule(name, site));
            if (rule != null) {
                onNewRule.run();
            }
        } else if (site.id >= 0) {
            warnIfSettingsDiffer(rule, site);
        }
        return rule;
    }

    /**
     * An inline rule is shared by every method of its default name (overloads; classes of one
     * simple name): it has the settings of the first one bound. A method whose annotation says
     * otherwise is counted under them, which the agent says once per rule and method.
     */
    private void warnIfSettingsDiffer(ActiveRule rule, MethodSite site) {
        MethodSite.AnnotationValues values = site.annotation;
        RuleConfig own;
        try {
            own = RuleConfig.inline(rule.name(), KeySpec.parse(values.key),
                    List.of(new LimitSpec(values.limit, Durations.parse(values.window))), rule.config().onError());
        } catch (IllegalArgumentException unusable) {
            own = null;
        }
        if (own == null || !own.equals(rule.config())) {
            // overloads share class and method name: the once-key is the site, the message names
            // the overload by its parameter types and its own settings (by its parameter count, it
            // once named two overloads of one parameter each alike)
            warnOnce("inline-differs:" + rule.name() + ":" + site.id, STANDS, "@RateLimited on " + site + " (the overload "
                    + site.signature() + ": key " + values.key + ", " + values.limit + " per " + values.window + ") declares other"
                    + " settings than the inline rule '" + rule.name() + "' it shares with the first method of that"
                    + " name (" + rule.config().describe() + "); its calls are counted under those: give it a rule"
                    + " by name (@RateLimited(\"...\")) to limit it apart");
        }
    }

    private ActiveRule inlineRule(String name, MethodSite site) {
        MethodSite.AnnotationValues values = site.annotation;
        try {
            if (values.limit <= 0) {
                throw new IllegalArgumentException("limit must be a positive whole number, not " + values.limit);
            }
            RuleConfig config = RuleConfig.inline(name, KeySpec.parse(values.key),
                    List.of(new LimitSpec(values.limit, Durations.parse(values.window))), ruleSet.store().onError());
            LOG.log(Level.DEBUG, () -> "rate-limit-agent: inline rule " + config.describe() + " from " + site);
            return new ActiveRule(config, limiters.create(config));
        } catch (IllegalArgumentException e) {
            warnOnce("inline:" + name, STANDS, "@RateLimited on " + site + " is not usable (" + e.getMessage()
                    + "); the method is not limited");
            return null;
        }
    }

    /** The method rules of the file that no instrumented method matches. */
    List<String> idleMethodRules(Collection<MethodSite> sites) {
        return idleMethodRules(sites, null);
    }

    /**
     * {@link #idleMethodRules(Collection)} among the rules of {@code among} (names), or all of
     * them for null; a rule of those names this book no longer names the same methods with is
     * left out.
     */
    List<String> idleMethodRules(Collection<MethodSite> sites, Map<String, String> among) {
        List<String> idle = new ArrayList<>();
        for (ActiveRule rule : methodRules) {
            if (among != null && !String.valueOf(rule.config().methodPattern()).equals(among.get(rule.name()))) {
                continue;
            }
            if (sites.stream().noneMatch(site -> site.patternsApply && matches(rule, site.className, site.methodName))) {
                String hint = rule.config().methodPattern().nestedClassHint();
                idle.add(rule.name() + " (" + rule.config().methodPattern() + (hint == null ? "" : "; " + hint) + ")");
            }
        }
        return idle;
    }

    /**
     * The method rules of this book that name methods {@code old} did not name so (a rule new to
     * this book, or one whose pattern changed), by name, with their patterns: those a reload
     * should look at for a pattern that matches nothing; with {@code old} null, all of them, for
     * start-up.
     */
    Map<String, String> methodRulesNewTo(RuleBook old) {
        Map<String, String> fresh = new LinkedHashMap<>();
        for (ActiveRule rule : methodRules) {
            ActiveRule before = old == null ? null : old.byName.get(rule.name());
            String pattern = String.valueOf(rule.config().methodPattern());
            if (before == null || !pattern.equals(String.valueOf(before.config().methodPattern()))) {
                fresh.put(rule.name(), pattern);
            }
        }
        return fresh;
    }

    /** Whether a warning's cause (see {@link #warned}) holds in this book too. */
    private boolean stands(Object cause) {
        if (cause instanceof String) {
            return rule((String) cause) == null; // the rule named is still missing
        }
        if (cause instanceof RuleConfig) {
            ActiveRule now = rule(((RuleConfig) cause).name());
            return now != null && now.config().equals(cause);
        }
        return cause == STANDS;
    }

    private void warnOnce(String what, Object cause, String message) {
        if (warned.putIfAbsent(what, cause) == null) {
            LOG.log(Level.WARNING, "rate-limit-agent: " + message);
        }
    }
}
