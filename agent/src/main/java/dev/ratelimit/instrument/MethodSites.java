package dev.ratelimit.instrument;

import dev.ratelimit.RateLimitExceededException;
import dev.ratelimit.bootstrap.MethodGate;
import dev.ratelimit.bootstrap.RateLimitBridge;
import dev.ratelimit.bootstrap.RequestContext;
import dev.ratelimit.limit.ActiveRule;
import dev.ratelimit.limit.Outcome;
import dev.ratelimit.limit.RequestKeys;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every instrumented method and the rules bound to it; the {@link MethodGate} the bridge calls.
 *
 * <p>Sites get ids at transform time; advice passes the id as a constant. The hot path is one
 * volatile array read and the rules' decisions. Bindings are recomputed for every site when the
 * rules change, so no advice needs to change with them.
 */
final class MethodSites implements MethodGate {
    private static final ActiveRule[] NONE = new ActiveRule[0];

    private final Object lock = new Object();
    private final Map<String, MethodSite> byIdentity = new ConcurrentHashMap<>();
    private volatile RuleBook rules;
    private volatile MethodSite[] sites = new MethodSite[0];
    private volatile ActiveRule[][] bindings = new ActiveRule[0][];

    MethodSites(RuleBook rules) {
        this.rules = rules;
    }

    /**
     * Registers a method being instrumented and returns its site id. The same method of the same
     * class loader, transformed again, keeps its id.
     */
    int register(ClassLoader loader, String className, String methodName, String descriptor, String simpleClassName,
            boolean passesArguments, MethodSite.AnnotationValues annotation) {
        String identity = System.identityHashCode(loader) + "/" + className + '#' + methodName + descriptor
                + (passesArguments ? "+args" : "");
        MethodSite known = byIdentity.get(identity);
        if (known != null) {
            return known.id;
        }
        synchronized (lock) {
            known = byIdentity.get(identity);
            if (known != null) {
                return known.id;
            }
            int id = sites.length;
            MethodSite site = new MethodSite(id, className, methodName, simpleClassName, passesArguments, annotation);
            MethodSite[] grownSites = Arrays.copyOf(sites, id + 1);
            grownSites[id] = site;
            ActiveRule[][] grownBindings = Arrays.copyOf(bindings, id + 1);
            grownBindings[id] = rules.rulesFor(site);
            sites = grownSites;
            bindings = grownBindings;
            byIdentity.put(identity, site);
            return id;
        }
    }

    /** Binds every site to the rules of a new rule book. */
    void rebind(RuleBook newRules) {
        synchronized (lock) {
            rules = newRules;
            MethodSite[] current = sites;
            ActiveRule[][] rebound = new ActiveRule[current.length][];
            for (int i = 0; i < current.length; i++) {
                rebound[i] = newRules.rulesFor(current[i]);
            }
            bindings = rebound;
        }
    }

    /** The instrumented methods so far. */
    List<MethodSite> sites() {
        return new ArrayList<>(Arrays.asList(sites));
    }

    /** The rules bound to a site now. */
    ActiveRule[] rulesOf(int site) {
        ActiveRule[][] current = bindings;
        return site < current.length ? current[site] : NONE;
    }

    @Override
    public Object enter(int site, Object[] arguments) {
        ActiveRule[] bound = rulesOf(site);
        if (bound.length == 0) {
            return null;
        }
        Object facts = RequestContext.current();
        RequestKeys request = facts instanceof RequestKeys ? (RequestKeys) facts : null;
        for (ActiveRule rule : bound) {
            long outcome = rule.decide(arguments, request);
            if (!Outcome.isAllowed(outcome)) {
                return rule.returnsDefault()
                        ? RateLimitBridge.RETURN_DEFAULT
                        : new RateLimitExceededException(rule.name(), Duration.ofMillis(Outcome.retryMillis(outcome)));
            }
        }
        return null;
    }
}
