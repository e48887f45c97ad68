package dev.ratelimit.limit;

import dev.ratelimit.config.Mode;
import dev.ratelimit.config.OnError;
import dev.ratelimit.config.OnReject;
import dev.ratelimit.config.RuleConfig;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A loaded rule: its configuration, key resolver, limiter and metrics, everything a decision
 * needs decided once when the rules are loaded.
 */
public final class ActiveRule {
    private static final System.Logger LOG = System.getLogger("dev.ratelimit");
    /** What a rule with {@code on-error: reject} tells callers to wait while its store is out. */
    static final long STORE_ERROR_RETRY_MILLIS = 1000;

    /**
     * Distinct for every rule made in this JVM (a reloaded rule is a new one), save a rule that
     * counts on under a new on-error: it is the same rule to a call already under way.
     */
    private static final AtomicInteger IDS = new AtomicInteger();

    private final int id;
    private final RuleConfig config;
    private final KeyResolver keys;
    private final Limiter limiter;
    private final boolean rejectOnStoreError;
    private final RuleMetrics metrics;
    /** Whether the limiter counts allowed calls itself (then the rule does not count them again). */
    private final boolean limiterCountsAllowed;
    private final boolean shadow;
    private final boolean returnDefault;
    private final boolean exemptable;
    private final long logIntervalMillis;
    /**
     * Whether calls under this rule can nest (the rule binds more than one method, or a method
     * that calls itself), so that a call with the same key inside a call under it is not counted
     * again. Set when methods are bound to rules, before the bindings are published (a volatile
     * write), so a call that reads those bindings sees it; read on every call, so not volatile.
     */
    private boolean nests;
    /** When a rejection was last logged; {@link #NEVER} until the first. */
    private final AtomicLong lastRejectionLog = new AtomicLong(NEVER);
    private static final long NEVER = Long.MIN_VALUE;

    /** A rule counted in this JVM, keeping at most {@code maxKeys} keys. */
    public ActiveRule(RuleConfig config, long maxKeys) {
        this(config, LocalLimiter.create(config, maxKeys));
    }

    /** A rule counted by {@code limiter}. */
    public ActiveRule(RuleConfig config, Limiter limiter) {
        this.id = IDS.incrementAndGet();
        this.config = config;
        // a global rule has one counter: no key to work out per call
        this.keys = config.key().isGlobal() ? null : KeyResolver.of(config.key());
        this.limiter = limiter;
        this.limiterCountsAllowed = limiter.countsAllowed();
        this.metrics = new RuleMetrics(limiterCountsAllowed ? limiter::allowed : () -> 0);
        this.rejectOnStoreError = config.onError() == OnError.REJECT;
        this.shadow = config.mode() == Mode.SHADOW;
        this.returnDefault = config.onReject() == OnReject.RETURN_DEFAULT;
        this.exemptable = config.exempt();
        long shortest = Long.MAX_VALUE;
        for (var limit : config.limits()) {
            shortest = Math.min(shortest, limit.window().toMillis());
        }
        this.logIntervalMillis = shortest;
        // a rule counted elsewhere (Redis) still reads the clock for its fields and its logs
        CoarseClock.resolve(shortest);
    }

    /**
     * This rule, counting on with its limiter and metrics, under {@code config}: this rule's own
     * settings with another on-error (a reload that edits only the store's default, which the
     * rule takes). Such an edit once started the rule's counters and metrics afresh.
     *
     * @throws IllegalArgumentException when {@code config} differs in more than its on-error
     */
    public ActiveRule withOnError(RuleConfig config) {
        if (!config.equals(this.config.withOnError(config.onError()))) {
            throw new IllegalArgumentException("only the on-error of a rule can change under its counters");
        }
        return new ActiveRule(this, config);
    }

    private ActiveRule(ActiveRule counting, RuleConfig config) {
        // a call under the rule when the reload came is still under it: one it makes with the
        // same key is not counted again on the shared counter
        this.id = counting.id;
        this.config = config;
        this.keys = counting.keys;
        this.limiter = counting.limiter;
        this.limiterCountsAllowed = counting.limiterCountsAllowed;
        this.metrics = counting.metrics;
        this.rejectOnStoreError = config.onError() == OnError.REJECT;
        this.shadow = counting.shadow;
        this.returnDefault = counting.returnDefault;
        this.exemptable = counting.exemptable;
        this.logIntervalMillis = counting.logIntervalMillis;
    }

    public String name() {
        return config.name();
    }

    /** This rule's number, distinct from every other rule made in this JVM. */
    public int id() {
        return id;
    }

    public RuleConfig config() {
        return config;
    }

    public RuleMetrics metrics() {
        return metrics;
    }

    public long trackedKeys() {
        return limiter.trackedKeys();
    }

    /** Whether the key reads method arguments. */
    public boolean usesArguments() {
        return keys != null && keys.usesArguments();
    }

    /** Whether calls under this rule can nest (see the field). */
    public boolean nests() {
        return nests;
    }

    public void nests(boolean nests) {
        this.nests = nests;
    }

    /** Whether a rejection returns the method's default value rather than throwing. */
    public boolean returnsDefault() {
        return returnDefault;
    }

    /**
     * Decides one call. Exempt requests are not counted at all.
     *
     * @param arguments the method's arguments, or {@code null} for HTTP rules
     * @param request the request being served, or {@code null}
     * @return an {@link Outcome}; in shadow mode always allowed
     */
    public long decide(Object[] arguments, RequestKeys request) {
        if (exempts(request)) {
            metrics.exempted.increment();
            return Outcome.allowed(Long.MAX_VALUE);
        }
        return count(keys == null ? null : keys.resolve(arguments, request));
    }

    /** Whether the request is exempt from this rule: then a call is not counted at all. */
    public boolean exempts(RequestKeys request) {
        return exemptable && request != null && request.exempt();
    }

    /** The key a call counts against; {@code null} for a global rule. */
    public String key(Object[] arguments, RequestKeys request) {
        return keys == null ? null : keys.resolve(arguments, request);
    }

    /**
     * Counts one call that is not exempt against {@code key} (from {@link #key}) and decides it,
     * as {@link #decide} does.
     */
    public long count(String key) {
        long outcome;
        try {
            outcome = limiter.acquire(key);
        } catch (StoreUnavailableException e) {
            metrics.storeErrors.increment();
            // shadow mode never rejects, whatever on-error says
            return rejectOnStoreError && !shadow ? Outcome.rejected(STORE_ERROR_RETRY_MILLIS) : Outcome.ALLOWED_UNCOUNTED;
        }
        if (Outcome.isAllowed(outcome)) {
            if (!limiterCountsAllowed) {
                metrics.allowed.increment();
            }
            return outcome;
        }
        metrics.rejected.increment();
        logRejection();
        return shadow ? Outcome.allowed(0) : outcome;
    }

    /**
     * At most one line per rule per (shortest) window; never the key. The count is the rule's
     * {@code Rejected} metric, which a reload that changes the rule's settings starts again.
     */
    private void logRejection() {
        long now = CoarseClock.millis();
        long last = lastRejectionLog.get();
        // (now - NEVER would overflow to a negative number: the first rejection is tested apart)
        if ((last == NEVER || now - last >= logIntervalMillis) && lastRejectionLog.compareAndSet(last, now)) {
            LOG.log(shadow ? Level.INFO : Level.DEBUG, "rate-limit-agent: rule '" + name() + "' "
                    + (shadow ? "would reject (shadow mode) " : "rejected ") + "calls over " + config.limits()
                    + "; " + metrics.rejected() + (shadow ? " would have been" : "")
                    + " rejected since these settings took effect");
        }
    }
}
