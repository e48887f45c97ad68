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
 */
abstract class EpochWindowLimit implements LimitAlgorithm {
    final long limit;
    final long windowMillis;

    EpochWindowLimit(long limit, long windowMillis) {
        this.limit = limit;
        this.windowMillis = windowMillis;
    }

    @Override
    public final Object newState(boolean exhausted) {
        if (!exhausted) {
            return new AtomicReference<>(new WindowCounter(Long.MIN_VALUE, 0));
        }
        WindowCounter full = new WindowCounter(CoarseClock.millis() / windowMillis, 0);
        full.set(limit);
        return new AtomicReference<>(full);
    }

    @Override
    @SuppressWarnings("unchecked")
    public final long acquire(Object state) {
        long now = CoarseClock.millis();
        WindowCounter counter = WindowCounter.current((AtomicReference<WindowCounter>) state, now / windowMillis);
        return decide(counter, counter.incrementAndGet(), now);
    }

    /** The outcome for the call that brought {@code counter} to {@code count} at {@code now}. */
    abstract long decide(WindowCounter counter, long count, long now);
}
