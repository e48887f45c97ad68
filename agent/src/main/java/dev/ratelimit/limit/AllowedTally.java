package dev.ratelimit.limit;

import java.util.concurrent.atomic.LongAdder;

/**
 * The allowed calls of a rule keyed {@code global} with one fixed-window limit, read from its
 * window counters instead of a second atomic per call.
 *
 * <h2>Why</h2>
 *
 * <p>A decision is one atomic increment. Counting the allowed call in a metric as well is a
 * second one, and on this kind of hardware each costs about as much as the rest of the decision.
 * With a single fixed window the count needs no second increment: a call is allowed exactly when
 * the increment returns at most the limit, so a window's allowed calls are
 * {@code min(count, limit)} (less the count it started at).
 *
 * <h2>Exactness</h2>
 *
 * <p>The thread whose compare-and-set replaces a window's counter seals it ({@link
 * WindowCounter#seal()}) and adds its allowed calls here. A call that read the old counter
 * before it was replaced and increments it after it was sealed sees the seal in the value its
 * increment returns, and adds itself here if it was allowed. So every allowed call is counted
 * exactly once: in the tally if its counter was sealed, in {@link #allowedIn} of the live counter
 * otherwise. A read that races with a window change can
 * be short by that window's calls for that one read; once calls stop, reads are exact.
 *
 * <p>Only for the one counter of a global rule: per-key counters leave their store by eviction
 * and expiry, and Caffeine hides an expired entry before it tells of its removal, so a read could
 * miss a key's calls. Keyed rules count allowed calls per call; their lookup costs more than that.
 */
final class AllowedTally {
    private final long limit;
    private final LongAdder sealed = new LongAdder();

    AllowedTally(long limit) {
        this.limit = limit;
    }

    /** Seals a replaced counter and counts the calls it allowed. */
    void retire(WindowCounter counter) {
        long count = counter.seal();
        if (count >= 0) {
            sealed.add(allowed(count, counter.initial));
        }
    }

    /** A call that incremented a sealed counter to {@code count}. */
    void late(WindowCounter counter, long count) {
        if (count <= limit && count > counter.initial) {
            sealed.increment();
        }
    }

    /** Allowed calls of a live (unsealed) counter. */
    long allowedIn(WindowCounter counter) {
        long value = counter.get();
        return value >= WindowCounter.SEALED ? 0 : allowed(value, counter.initial);
    }

    /** Allowed calls of every sealed counter. */
    long sealed() {
        return sealed.sum();
    }

    private long allowed(long count, long initial) {
        return Math.max(0, Math.min(count, limit) - initial);
    }
}
