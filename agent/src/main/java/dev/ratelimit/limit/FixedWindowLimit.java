package dev.ratelimit.limit;

import java.util.concurrent.atomic.AtomicReference;

/**
 * Fixed windows aligned to the epoch, so every instance agrees on where a window starts.
 *
 * <p>A key's state points at the counter of its current window. The first call of a new window
 * swaps in a fresh counter with one compare-and-set; threads that lose the race use the winner's.
 * An old window's counter is never reused. The decision is the value returned by the counter's
 * {@code incrementAndGet}: with a limit of 5, exactly 5 concurrent calls see a value of 5 or less.
 * Rejected calls are counted too; they make no difference to this window's outcome.
 */
final class FixedWindowLimit implements LimitAlgorithm {
    private final long limit;
    private final long windowMillis;

    FixedWindowLimit(long limit, long windowMillis) {
        this.limit = limit;
        this.windowMillis = windowMillis;
    }

    @Override
    public Object newState() {
        return new AtomicReference<>(new WindowCounter(Long.MIN_VALUE, 0));
    }

    @Override
    @SuppressWarnings("unchecked")
    public long acquire(Object state) {
        long now = CoarseClock.millis();
        long windowId = now / windowMillis;
        WindowCounter counter = WindowCounter.current((AtomicReference<WindowCounter>) state, windowId);
        return Decisions.fixedWindow(counter.incrementAndGet(), limit, (counter.id + 1) * windowMillis - now);
    }

    @Override
    public long retentionMillis() {
        return windowMillis;
    }
}
