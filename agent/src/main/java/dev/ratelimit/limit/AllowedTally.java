package dev.ratelimit.limit;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The allowed calls of a rule with one fixed-window limit, read from its window counters instead
 * of a second atomic per call.
 *
 * <h2>Why</h2>
 *
 * <p>A decision is one atomic increment. Counting the allowed call in a metric as well is a
 * second one, and on this kind of hardware each costs about as much as the rest of the decision;
 * with two threads on one key the two are serialised behind the contended increment. With a
 * single fixed window the count needs no second increment: a call is allowed exactly when the
 * increment returns at most the limit, so a window's allowed calls are {@code min(count, limit)}
 * (less the count it started at).
 *
 * <h2>Exactness</h2>
 *
 * <p>Every counter is in exactly one of two places as far as the metric is concerned:
 * <ul>
 *   <li><b>open</b>: in {@link #live}, registered before any call can reach it;
 *   <li><b>retired</b>: sealed ({@link WindowCounter#seal()}) and its allowed calls added to
 *       {@link #sealed}, then taken out of {@code live}.
 * </ul>
 * A counter is retired by the thread whose compare-and-set replaced it with the next window's,
 * or when its key leaves the store (eviction, expiry). The set is ours, not the store's view, so
 * a key that the store already hides (Caffeine hides an expired entry before it reports the
 * removal) is still counted, as open, until its removal is handled.
 *
 * <p>A call that read a counter before it was retired and increments it after it was sealed sees
 * the seal in the value its increment returns, and adds itself to {@code sealed} if it was
 * allowed. So every allowed call is counted exactly once. A read sums {@code sealed} first, then
 * the open counters, skipping sealed ones: a counter retired in between is missed by that one
 * read, never counted twice. Once calls stop, reads are exact.
 */
final class AllowedTally {
    private final long limit;
    private final LongAdder sealed = new LongAdder();
    /** The open counters (identity: counters do not override equals). */
    private final Set<WindowCounter> live = ConcurrentHashMap.newKeySet();

    AllowedTally(long limit) {
        this.limit = limit;
    }

    /** Registers a counter that calls are about to reach. */
    void open(WindowCounter counter) {
        live.add(counter);
    }

    /** Forgets a counter that was opened but never installed (no call reached it). */
    void discard(WindowCounter counter) {
        live.remove(counter);
    }

    /** Seals a replaced or dropped counter and counts the calls it allowed; repeats are no-ops. */
    void retire(WindowCounter counter) {
        long count = counter.seal();
        if (count >= 0) {
            sealed.add(allowed(count, counter.initial));
        }
        live.remove(counter);
    }

    /** A call that incremented a sealed counter to {@code count}. */
    void late(WindowCounter counter, long count) {
        if (count <= limit && count > counter.initial) {
            sealed.increment();
        }
    }

    /** The allowed calls so far (see the class comment for what a racing read may miss). */
    long allowed() {
        long total = sealed.sum();
        for (WindowCounter counter : live) {
            long value = counter.get();
            if (value < WindowCounter.SEALED) {
                total += allowed(value, counter.initial);
            }
        }
        return total;
    }

    /** Open counters (for tests: a dropped key must not leave its counter here). */
    int openCounters() {
        return live.size();
    }

    private long allowed(long count, long initial) {
        return Math.max(0, Math.min(count, limit) - initial);
    }
}
