package dev.ratelimit.instrument;

import dev.ratelimit.RateLimitExceededException;
import dev.ratelimit.bootstrap.CallScope;
import dev.ratelimit.bootstrap.MethodGate;
import dev.ratelimit.bootstrap.RateLimitBridge;
import dev.ratelimit.bootstrap.RequestContext;
import dev.ratelimit.limit.ActiveRule;
import dev.ratelimit.limit.KeyUnreadableException;
import dev.ratelimit.limit.Outcome;
import dev.ratelimit.limit.RequestKeys;
import java.lang.ref.WeakReference;
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
 *
 * <p>A call made from inside a limited call under the same rule (an overload delegating to
 * another, {@code super.send()} under {@code *#send}, a method calling itself) is part of the call
 * that was counted, and is not counted again. Keeping track costs about 4 ns a call for a method
 * with one rule (a stack in the slot the bridge keeps per thread), so it is done only for rules
 * that can nest: a rule bound
 * to two or more methods, or to a method whose code calls a method of its own name and
 * descriptor. For those, {@link #enter} returns a {@link CallScope} the exit advice closes.
 */
final class MethodSites implements MethodGate {
    private static final ActiveRule[] NONE = new ActiveRule[0];

    private final Object lock = new Object();
    /**
     * The sites by loader and method. A loader is named by its identity hash, which two loaders
     * can share (a web application redeployed a few thousand times makes as many loaders of the
     * same classes), so each entry also keeps its loader, weakly, and a second loader of the same
     * hash and method takes the next free name.
     */
    private final Map<String, Registered> byIdentity = new ConcurrentHashMap<>();
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
            int parameterCount, boolean passesArguments, boolean callsItself, MethodSite.AnnotationValues annotation) {
        return register(loader, className, methodName, descriptor, simpleClassName, parameterCount, passesArguments,
                callsItself, annotation, null);
    }

    /**
     * As above, for a Kotlin {@code suspend} function too: {@code resumedBy} is its continuation
     * class (see {@link MethodSite#resumedBy}), and its advice passes the arguments.
     */
    int register(ClassLoader loader, String className, String methodName, String descriptor, String simpleClassName,
            int parameterCount, boolean passesArguments, boolean callsItself, MethodSite.AnnotationValues annotation,
            String resumedBy) {
        return register(loader, className, methodName, descriptor, simpleClassName, parameterCount, passesArguments,
                callsItself, annotation, resumedBy, true);
    }

    /** As above; {@code patternsApply} false for a method only its annotation may limit (see {@link MethodSite}). */
    int register(ClassLoader loader, String className, String methodName, String descriptor, String simpleClassName,
            int parameterCount, boolean passesArguments, boolean callsItself, MethodSite.AnnotationValues annotation,
            String resumedBy, boolean patternsApply) {
        String method = "/" + className + '#' + methodName + descriptor + (passesArguments ? "+args" : "");
        String identity = (loader == null ? "boot" : Integer.toString(System.identityHashCode(loader))) + method;
        Registered known = byIdentity.get(identity);
        if (known != null && known.loader.get() == loader) {
            return known.site.id;
        }
        synchronized (lock) {
            for (int next = 1; (known = byIdentity.get(identity)) != null; next++) {
                if (known.loader.get() == loader) {
                    return known.site.id;
                }
                // another loader of the same hash, or a collected one: its record stays
                identity = System.identityHashCode(loader) + "~" + next + method;
            }
            int id = sites.length;
            MethodSite site = new MethodSite(id, className, methodName, descriptor, simpleClassName, parameterCount,
                    passesArguments, callsItself, annotation, resumedBy, patternsApply);
            MethodSite[] grownSites = Arrays.copyOf(sites, id + 1);
            grownSites[id] = site;
            ActiveRule[][] grownBindings = Arrays.copyOf(bindings, id + 1);
            grownBindings[id] = rules.rulesFor(site);
            markNesting(grownSites, grownBindings, id);
            sites = grownSites;
            bindings = grownBindings;
            byIdentity.put(identity, new Registered(loader, site));
            return id;
        }
    }

    /** A site and the loader of its class (null: the boot loader), which it does not keep alive. */
    private static final class Registered {
        final WeakReference<ClassLoader> loader;
        final MethodSite site;

        Registered(ClassLoader loader, MethodSite site) {
            this.loader = new WeakReference<>(loader);
            this.site = site;
        }
    }

    /** Binds every site to the rules of a new rule book. */
    void rebind(RuleBook newRules) {
        synchronized (lock) {
            // inline rules made under the old book since the new one was made: none is made
            // under it once this lock is let go
            newRules.takeInlineRules(rules);
            // the rules a site may keep (below) count on the old book's store: not once a reload
            // replaced it, which closes within a minute (every call would then follow on-error)
            boolean sameStore = rules.limiters() == newRules.limiters();
            rules = newRules;
            MethodSite[] current = sites;
            ActiveRule[][] rebound = new ActiveRule[current.length][];
            for (int i = 0; i < current.length; i++) {
                // A rule of the new book keys on arguments this site's code does not pass: the
                // reload retransforms its class (a site of its own, with the arguments, then takes
                // the calls). Until then the site keeps the rules it had: bound to the new book
                // alone it had none, and the method ran unlimited through the retransformation
                // (184 calls past a limit of 5 in a review's run: review of attach and reload,
                // thirty-fourth round). Should its class be refused, it keeps them.
                rebound[i] = sameStore && newRules.needsArguments(current[i]) ? bindings[i] : newRules.rulesFor(current[i]);
            }
            for (int i = 0; i < current.length; i++) {
                markNesting(current, rebound, i);
            }
            bindings = rebound;
        }
    }

    /**
     * Marks whether each rule of site {@code at} can nest: it does if the site calls itself or
     * another site is bound to the rule too. Runs before the bindings are published, so a call
     * that sees them sees the marks; a site registered later can only turn a mark on.
     */
    private static void markNesting(MethodSite[] sites, ActiveRule[][] bindings, int at) {
        for (ActiveRule rule : bindings[at]) {
            boolean nests = sites[at].callsItself;
            for (int other = 0; other < sites.length && !nests; other++) {
                if (other != at && contains(bindings[other], rule)) {
                    nests = true;
                }
            }
            if (nests != rule.nests()) {
                rule.nests(nests);
            }
        }
    }

    private static boolean contains(ActiveRule[] rules, ActiveRule rule) {
        for (ActiveRule candidate : rules) {
            if (candidate == rule) {
                return true;
            }
        }
        return false;
    }

    /** The thread's call stack, kept in its slot of the bridge's thread-local (made on first use). */
    private static CallStack stackOf(RequestContext.Slot slot) {
        Object calls = slot.calls;
        if (calls instanceof CallStack) {
            return (CallStack) calls;
        }
        CallStack stack = new CallStack();
        slot.calls = stack;
        return stack;
    }

    /** A call made while serving a request with a forged token: the rule's ForgedTokens counts it. */
    private static void countForged(ActiveRule rule, RequestKeys request) {
        if (request != null && request.forged()) {
            rule.metrics().countForgedToken();
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
        if (arguments != null && resumes(site, arguments)) {
            return null; // a suspend function resuming: its call was decided when it began
        }
        RequestContext.Slot slot = RequestContext.slot();
        if (slot.readingKey) {
            return null; // called by a key being read (a getter of the key's): the agent's call, not counted
        }
        Object facts = slot.request;
        RequestKeys request = facts instanceof RequestKeys ? (RequestKeys) facts : null;
        // kept small, so that the JIT inlines it into the woven method: rules that nest, and
        // rejections, are handled out of line
        for (int i = 0; i < bound.length; i++) {
            ActiveRule rule = bound[i];
            if (rule.nests()) {
                return bound.length == 1
                        ? enterNestingAlone(rule, arguments, request, slot)
                        : enterNesting(bound, i, arguments, request, slot);
            }
            long outcome = decideOrLetThrough(rule, arguments, request);
            if (!Outcome.isAllowed(outcome)) {
                return rejection(rule, outcome);
            }
        }
        return null;
    }

    /**
     * Whether the call at {@code site} is a Kotlin {@code suspend} function resuming: its last
     * argument is the function's own continuation, marked as resuming (see
     * {@link MethodSite#resuming}), which the continuation passes when it resumes the function
     * where it suspended. A call counted at each resumption was counted once per suspension, and
     * one that a later resumption refused stopped half done.
     */
    private boolean resumes(int site, Object[] arguments) {
        MethodSite[] known = sites;
        MethodSite at = site < known.length ? known[site] : null;
        if (at == null || at.resumedBy == null || arguments.length == 0) {
            return false;
        }
        Object last = arguments[arguments.length - 1];
        return last != null && last.getClass().getName().equals(at.resumedBy) && MethodSite.resuming(last);
    }

    /**
     * One rule's decision. An error inside it (a key getter that throws, a key's toString that
     * overflows the stack) lets the call through that rule alone, counted as the bridge counts any
     * error of the agent's: it once ended the whole decision, and the method's other rules (a
     * global limit beside a keyed one) let every such call through too. Any Throwable: the key
     * runs the application's code, and an Error there (StackOverflowError above all) is as much
     * that rule's failure as an exception; the bridge would let the whole call through anyway.
     */
    private static long decideOrLetThrough(ActiveRule rule, Object[] arguments, RequestKeys request) {
        try {
            countForged(rule, request);
            return rule.decide(arguments, request);
        } catch (Throwable e) {
            undecided(rule, e);
            return Outcome.ALLOWED_UNCOUNTED;
        }
    }

    /**
     * {@link #enterNesting} for a site with one rule, the common case. Kept apart and small:
     * the general loop compiles to more code than the JIT inlines into the woven method (its
     * limit on an already-compiled callee), and was called out of line on every call.
     */
    private static Object enterNestingAlone(ActiveRule rule, Object[] arguments, RequestKeys request,
            RequestContext.Slot slot) {
        CallStack stack = stackOf(slot);
        int depth = stack.depth();
        long outcome = decideNesting(rule, arguments, request, stack);
        if (!Outcome.isAllowed(outcome)) {
            return rejection(rule, outcome);
        }
        return stack.depth() == depth ? null : stack.scope(depth);
    }

    /**
     * {@link #enter} from the rule at {@code from} on, the first that can nest: a rule whose key
     * is already on the thread's call stack is not counted again; those counted are pushed, and
     * the returned scope pops them when the call ends.
     */
    private static Object enterNesting(ActiveRule[] bound, int from, Object[] arguments, RequestKeys request,
            RequestContext.Slot slot) {
        CallStack stack = stackOf(slot);
        int depth = stack.depth();
        try {
            for (int i = from; i < bound.length; i++) {
                ActiveRule rule = bound[i];
                long outcome = decideNesting(rule, arguments, request, stack);
                if (!Outcome.isAllowed(outcome)) {
                    stack.truncate(depth);
                    return rejection(rule, outcome);
                }
            }
        } catch (Throwable t) {
            // the call proceeds without a scope (the bridge lets it through): leave nothing pushed
            stack.truncate(depth);
            throw t;
        }
        return stack.depth() == depth ? null : stack.scope(depth);
    }

    /**
     * What an exempt call under a rule that nests is pushed with, for the calls inside it: no key
     * equals it (a key holding a lone surrogate is counted by its hash, see {@code KeyResolver}).
     */
    private static final String EXEMPT = "\uD800exempt";

    /**
     * One rule's decision where calls may nest. A rule that can nest and does not exempt the
     * request is not counted again for a key already on the stack, and a key it counts and
     * allows is pushed; other rules decide as {@link #decideOrLetThrough} does.
     */
    private static long decideNesting(ActiveRule rule, Object[] arguments, RequestKeys request, CallStack stack) {
        if (!rule.nests()) {
            return decideOrLetThrough(rule, arguments, request);
        }
        if (rule.exempts(request)) {
            // not counted, and its Exempted metric counts it once, as Allowed counts a plain call
            // once: the calls inside it are part of it (each was counted in Exempted again)
            if (stack.inside(rule, EXEMPT)) {
                return Outcome.ALLOWED_UNCOUNTED;
            }
            long outcome = decideOrLetThrough(rule, arguments, request);
            stack.push(rule, EXEMPT);
            return outcome;
        }
        String key;
        long outcome;
        try {
            key = rule.key(arguments, request);
            if (stack.inside(rule, key)) {
                return Outcome.ALLOWED_UNCOUNTED; // counted by the call this one is part of
            }
            countForged(rule, request);
            outcome = rule.count(key);
        } catch (Throwable e) {
            // as decideOrLetThrough: this rule lets the call through, the others decide
            undecided(rule, e);
            return Outcome.ALLOWED_UNCOUNTED;
        }
        if (Outcome.isAllowed(outcome)) {
            stack.push(rule, key);
        }
        return outcome;
    }

    /**
     * Reports a rule that could not decide a call, which it let through: a key the rule cannot
     * read from these arguments as a warning naming the rule and the reason (it was once an
     * internal error with the agent's stack trace), anything else as an internal error.
     */
    private static void undecided(ActiveRule rule, Throwable e) {
        if (e instanceof KeyUnreadableException) {
            KeyUnreadableException unreadable = (KeyUnreadableException) e;
            RateLimitBridge.keyUnreadable(rule.name(), unreadable.part(), unreadable.getMessage());
        } else {
            RateLimitBridge.agentError(limiting(rule), e);
        }
    }

    /**
     * Where an error of one rule's decision happened, for the bridge's log: the rule is named, so
     * that each rule whose key cannot be read is logged once. What the application's code throws
     * for a key is always reported as one exception class (see {@code ThrownByApplication}), so
     * without the name the first broken rule's line stood for every other one: a second rule
     * whose key getter or toString throws limited nothing, and the log never said so.
     */
    private static String limiting(ActiveRule rule) {
        return "limiting a method call under rule '" + rule.name() + "'";
    }

    /** What the advice gets for a call a rule rejected: the exception to throw, or the default's marker. */
    private static Object rejection(ActiveRule rule, long outcome) {
        return rule.returnsDefault()
                ? RateLimitBridge.RETURN_DEFAULT
                : new RateLimitExceededException(rule.name(), Duration.ofMillis(Outcome.retryMillis(outcome)));
    }
}
