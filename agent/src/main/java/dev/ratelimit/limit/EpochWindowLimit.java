package dev.ratelimit.limit;

import java.util.concurrent.atomic.AtomicReference;

/**
 * Windows aligned to the epoch, so every instance agrees on where a window starts.
 *
 * <p>A key's state points at the counter of its current window. The first call of a new window
 * swaps in a fresh counter with one compare-and-set; threads that lose the race use the winner's.
 * An old window's counter is never reused. The count returned by the counter's
 * {@code incrementAndGet} decides: with a limit of 5, exactly 5 concurrent calls see 5 or less.
 * Rejected calls are counted too.
 *
 * <p>A call inside the current window costs one volatile read of the state, a comparison with
 * the window's end, and the increment: no division (the window id is computed only when a window
 * ends).
 *
 * <p>With a {@link AllowedTally}, the counters double as the rule's count of allowed calls: the
 * thread that replaces a window's counter seals it and adds the calls it allowed to the tally;
 * a call that reaches a sealed counter counts itself.
 */
abstract class EpochWindowLimit implements LimitAlgorithm {
    final long limit;
    final long windowMillis;
    private final AllowedTally tally;

    EpochWindowLimit(long limit, long windowMillis, AllowedTally tally) {
        this.limit = limit;
        this.windowMillis = windowMillis;
        this.tally = tally;
    }

    @Override
    public final Object newState(boolean exhausted) {
        if (!exhausted) {
            return new AtomicReference<>(new WindowCounter(Long.MIN_VALUE, 0, Long.MIN_VALUE, 0));
        }
        long id = CoarseClock.millis() / windowMillis;
        return new AtomicReference<>(new WindowCounter(id, 0, (id + 1) * windowMillis, limit));
    }

    @Override
    @SuppressWarnings("unchecked")
    public final long acquire(Object state) {
        long now = CoarseClock.millis();
        AtomicReference<WindowCounter> current = (AtomicReference<WindowCounter>) state;
        WindowCounter counter = current.get();
        if (now >= counter.end) {
            counter = advance(current, counter, now);
        }
        long count = counter.incrementAndGet();
        if (count >= WindowCounter.SEALED) {
            count -= WindowCounter.SEALED;
            if (tally != null) {
                tally.late(counter, count);
            }
        }
        return decide(counter, count, now);
    }

    /**
     * The counter of the window holding {@code now}, installing it if this is the window's first
     * call. A counter from a later window (another thread read the clock a tick later, or the
     * clock stepped back) is used as is.
     */
    private WindowCounter advance(AtomicReference<WindowCounter> current, WindowCounter counter, long now) {
        long id = now / windowMillis;
        while (counter.id < id) {
            long previous = counter.id == id - 1 ? counter.count() : 0;
            WindowCounter next = new WindowCounter(id, previous, (id + 1) * windowMillis, 0);
            if (current.compareAndSet(counter, next)) {
                if (tally != null) {
                    tally.retire(counter);
                }
                return next;
            }
            counter = current.get();
        }
        return counter;
    }

    /** Allowed calls counted in the live window of {@code state} (see {@link AllowedTally}). */
    @Override
    @SuppressWarnings("unchecked")
    public final long allowedInLiveWindow(Object state) {
        return tally == null ? 0 : tally.allowedIn(((AtomicReference<WindowCounter>) state).get());
    }

    /** The outcome for the call that brought {@code counter} to {@code count} at {@code now}. */
    abstract long decide(WindowCounter counter, long count, long now);
}
