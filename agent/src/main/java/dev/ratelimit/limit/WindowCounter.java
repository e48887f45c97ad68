package dev.ratelimit.limit;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The count of one window of one key; {@code previous} is the count of the window before it.
 *
 * <p>A counter whose window is over may be <em>sealed</em>: {@link #SEALED} is added to its value
 * once, atomically, and the value before it is the window's final count as far as the metrics are
 * concerned. A call that reached the counter late (it read the clock, then the window was
 * replaced before its increment) sees a value at or above {@code SEALED}, and so knows it was not
 * in that final count.
 *
 * <p>Layout: the count is the only field written per call, and it sits on a cache line of its
 * own. The window's fields, read on every call, come first in the object, then 56 bytes of
 * padding, the count, and 56 bytes more. Without it, a key called from two cores had every read
 * of the window's end (and of whatever the allocator put next to the counter: the key's slot,
 * the cache's node) miss, because the other core's increment had just taken the line; the hot
 * key on 2 threads took about 150 ns a call against 43 ns for the bare contended increment
 * (benchmarks/README.md). The padding costs 112 bytes per tracked key.
 */
final class WindowCounter extends WindowCounterCount {
    /** Far above any count (a window would need 2^62 calls to reach it). */
    static final long SEALED = 1L << 62;

    @SuppressWarnings("unused")
    private long after01, after02, after03, after04, after05, after06, after07;

    WindowCounter(long id, long previous, long end, long initial) {
        super(id, previous, end, initial);
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

/** The window's fields: written once, read by every call. */
abstract class WindowCounterFields {
    final long id;
    /**
     * The previous window's count. Written once, before the counter is published: in the
     * constructor, or by the sliding window between sealing the old counter and installing this
     * one (the state's volatile write publishes it).
     */
    long previous;
    /** Wall-clock milliseconds at which the window ends. */
    final long end;
    /** What the count started at: 0, or the limit for a key known to be over it. */
    final long initial;

    WindowCounterFields(long id, long previous, long end, long initial) {
        this.id = id;
        this.previous = previous;
        this.end = end;
        this.initial = initial;
    }
}

/** Keeps the count off the fields' cache line (a superclass's fields are laid out first). */
abstract class WindowCounterPadding extends WindowCounterFields {
    @SuppressWarnings("unused")
    private long before01, before02, before03, before04, before05, before06, before07;

    WindowCounterPadding(long id, long previous, long end, long initial) {
        super(id, previous, end, initial);
    }
}

/** The count, changed only through {@link #VALUE}. */
abstract class WindowCounterCount extends WindowCounterPadding {
    private static final VarHandle VALUE;

    static {
        try {
            VALUE = MethodHandles.lookup().findVarHandle(WindowCounterCount.class, "value", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile long value;

    WindowCounterCount(long id, long previous, long end, long initial) {
        super(id, previous, end, initial);
        this.value = initial;
    }

    final long get() {
        return value;
    }

    final long incrementAndGet() {
        return (long) VALUE.getAndAdd(this, 1L) + 1L;
    }

    /** Takes a call back out of the count (a sliding window's rejected call). */
    final void decrement() {
        VALUE.getAndAdd(this, -1L);
    }

    final boolean compareAndSet(long expected, long next) {
        return VALUE.compareAndSet(this, expected, next);
    }
}
