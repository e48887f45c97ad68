package dev.ratelimit.limit;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The count of one window of one key; {@code previous} is the count of the window before it.
 *
 * <p>A counter whose window is over may be <em>sealed</em>: {@link #SEALED} is added to its value
 * once, atomically, and the value before it is the window's final count as far as the metrics are
 * concerned. A call that reached the counter late (it read the clock, then the window was
 * replaced before its increment) sees a value at or above {@code SEALED}, and so knows it was not
 * in that final count.
 */
final class WindowCounter extends AtomicLong {
    private static final long serialVersionUID = 1L;
    /** Far above any count (a window would need 2^62 calls to reach it). */
    static final long SEALED = 1L << 62;

    final long id;
    final long previous;
    /** Wall-clock milliseconds at which the window ends. */
    final long end;
    /** What the count started at: 0, or the limit for a key known to be over it. */
    final long initial;

    WindowCounter(long id, long previous, long end, long initial) {
        super(initial);
        this.id = id;
        this.previous = previous;
        this.end = end;
        this.initial = initial;
    }

    /** The count, without the seal. */
    long count() {
        return get() & (SEALED - 1);
    }

    /**
     * Seals the counter.
     *
     * @return the count when sealed, or -1 if it was sealed already
     */
    long seal() {
        while (true) {
            long value = get();
            if (value >= SEALED) {
                return -1;
            }
            if (compareAndSet(value, value + SEALED)) {
                return value;
            }
        }
    }
}
