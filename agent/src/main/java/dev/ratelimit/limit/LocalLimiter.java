package dev.ratelimit.limit;

import dev.ratelimit.config.Algorithm;
import dev.ratelimit.config.LimitSpec;
import dev.ratelimit.config.RuleConfig;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The limits of one rule over its keys, counted in this JVM.
 *
 * <h2>Design</h2>
 *
 * <p>Every decision is <b>increment-first</b>: the call is counted with one atomic operation and
 * the value that operation returns decides. There is never a read of the count followed by a
 * write, which lets any number of concurrent callers through a check they all pass before any of
 * them increments; with this design 100 simultaneous calls against a limit of 5 let exactly 5
 * through.
 *
 * <p>A rule with several limits ({@code limits:}) counts the call in each and rejects it if any
 * rejects; the retry time is the latest of the rejecting limits. A rejected call is then taken
 * back out of the limits that allowed it: it uses up none of them. The per-key state is one array
 * holding each limit's state, found with one lookup in the {@link KeyStore}.
 *
 * <p>Windows: fixed and sliding windows are aligned to the epoch on the wall clock; token buckets
 * run on the monotonic clock. Both clocks are {@link CoarseClock} readings.
 */
public final class LocalLimiter implements Limiter {
    private final LimitAlgorithm[] limits;
    private final KeyStore store;
    private final AllowedTally tally;
    private final AtomicLong highestAllowed = new AtomicLong();

    private LocalLimiter(LimitAlgorithm[] limits, KeyStore store, AllowedTally tally) {
        this.limits = limits;
        this.store = store;
        this.tally = tally;
    }

    /** A limiter for the rule, keeping at most {@code maxKeys} keys. */
    public static LocalLimiter create(RuleConfig rule, long maxKeys) {
        List<LimitSpec> specs = rule.limits();
        // one fixed window: its counters tell the allowed calls (see AllowedTally)
        AllowedTally tally = specs.size() == 1 && rule.algorithm() == Algorithm.FIXED_WINDOW
                ? new AllowedTally(specs.get(0).limit()) : null;
        LimitAlgorithm[] limits = new LimitAlgorithm[specs.size()];
        long retention = 0;
        for (int i = 0; i < limits.length; i++) {
            limits[i] = algorithm(rule, specs.get(i), tally);
            retention = Math.max(retention, limits[i].retentionMillis());
        }
        KeyStore store = rule.key().isGlobal()
                ? KeyStore.single(newState(limits, 0))
                : KeyStore.local(maxKeys, retention, exhausted -> newState(limits, exhausted), state -> close(limits, state),
                        state -> spent(limits, state));
        return new LocalLimiter(limits, store, tally);
    }

    private static LimitAlgorithm algorithm(RuleConfig rule, LimitSpec spec, AllowedTally tally) {
        long windowMillis = spec.window().toMillis();
        CoarseClock.resolve(windowMillis);
        switch (rule.algorithm()) {
            case SLIDING_WINDOW: return new SlidingWindowLimit(spec.limit(), windowMillis);
            case TOKEN_BUCKET: return new TokenBucketLimit(spec.limit(), windowMillis);
            default: return new FixedWindowLimit(spec.limit(), windowMillis, tally);
        }
    }

    /** A key's state, starting used up in the limits of {@code exhausted} (see {@link #bit}). */
    private static Object[] newState(LimitAlgorithm[] limits, long exhausted) {
        Object[] state = new Object[limits.length];
        for (int i = 0; i < limits.length; i++) {
            state[i] = limits[i].newState((exhausted & bit(i)) != 0);
        }
        return state;
    }

    /** Limit {@code i}'s bit in a mask of limits; the 64th and later share the last bit. */
    private static long bit(int i) {
        return 1L << Math.min(i, 63);
    }

    /** Whether a key's state is at or over any of its limits. */
    private static boolean spent(LimitAlgorithm[] limits, Object[] state) {
        for (int i = 0; i < limits.length; i++) {
            if (limits[i].spent(state[i])) {
                return true;
            }
        }
        return false;
    }

    private static void close(LimitAlgorithm[] limits, Object[] state) {
        for (int i = 0; i < limits.length; i++) {
            limits[i].close(state[i]);
        }
    }

    /**
     * Counts one call for {@code key} and decides it.
     *
     * @param key the key; ignored by rules keyed {@code global}
     * @return an {@link Outcome}
     */
    @Override
    public long acquire(String key) {
        Object[] state = store.state(key);
        long outcome;
        long over;
        if (limits.length == 1) {
            outcome = limits[0].acquire(state[0]);
            if (Outcome.isAllowed(outcome)) {
                return outcome;
            }
            over = 1;
        } else {
            Object[] counted = new Object[limits.length];
            outcome = Long.MAX_VALUE;
            over = 0;
            for (int i = 0; i < limits.length; i++) {
                long one = limits[i].acquire(state[i], counted, i);
                if (!Outcome.isAllowed(one)) {
                    over |= bit(i);
                    counted[i] = null;
                }
                outcome = Outcome.combine(outcome, one);
            }
            if (over == 0) {
                return outcome;
            }
            // refused: the limits that allowed the call take it back out, so a client refused by
            // a limit of a second does not use up its limit of an hour with the calls refused
            for (int i = 0; i < limits.length; i++) {
                if (counted[i] != null) {
                    limits[i].refund(counted[i]);
                }
            }
        }
        // The agent sees a window end (or a token come back) when its clock reaches it, up to
        // a reading's lag after the moment itself: the retry time has that lag added
        // (CoarseClock.retryMarginMillis), so a caller that waits exactly that long is not
        // refused again.
        // The penalty (a key evicted and made again starts used up until then) ends with the
        // window itself: a key made again in that tick belongs to the next window.
        store.penalize(key, over, CoarseClock.millis() + Outcome.retryMillis(outcome));
        return Outcome.rejected(Outcome.retryMillis(outcome) + CoarseClock.retryMarginMillis());
    }

    @Override
    public long trackedKeys() {
        return store.size();
    }

    /** Until when {@code key} is remembered as over a limit, should it be evicted (wall clock), or 0; for tests. */
    long penaltyUntil(String key) {
        return store.penaltyUntil(key);
    }

    /** The state of {@code key} for each limit, made if absent; for tests. */
    Object[] stateOf(String key) {
        return store.state(key);
    }

    /** States kept after an eviction at or over a limit; for tests. */
    long keptKeys() {
        return store.keptSize();
    }

    /** Counters the allowed count still reads (one per tracked key once maintenance has run). */
    int openCounters() {
        return tally == null ? 0 : tally.openCounters();
    }

    @Override
    public boolean countsAllowed() {
        return tally != null;
    }

    @Override
    public long allowed() {
        if (tally == null) {
            return 0;
        }
        // A read racing a window change can miss that window's calls (never count them twice), so
        // the largest read so far is given: the metric never goes down (an exporter would take
        // that for a reset).
        return highestAllowed.accumulateAndGet(tally.allowed(), Math::max);
    }
}
