package dev.ratelimit.limit;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Windows aligned to the epoch, so every instance agrees on where a window starts.
 *
 * <p>A key's state points at the counter of its current window. The first call of a new window
 * swaps in a fresh counter with one compare-and-set; threads that lose the race use the winner's.
 * An old window's counter is never reused. A sliding window, whose next window starts from the
 * old one's final count, seals the old counter first and carries the count the seal returns; the
 * thread that sealed it installs the next one, and a call that reaches the sealed counter counts
 * in the next. The count returned by the counter's
 * {@code incrementAndGet} decides: with a limit of 5, exactly 5 concurrent calls see 5 or less.
 * Rejected calls are counted too; the sliding window then takes them back out.
 *
 * <p>A call inside the current window costs one volatile read of the state, a comparison with
 * the window's end, and the increment: no division (the window id is computed only when a window
 * ends). The same comparison catches a wall clock stepped back by more than a window (an NTP
 * step, a restored VM snapshot): a counter of a window that far ahead is replaced by one of the
 * window holding now, so the key is not held to a window that ends hours away. A counter that
 * far ahead may also be a sign that the call's own reading is old: its thread read the clock,
 * then was held up (descheduled, a GC pause) while other calls moved the key on by two windows
 * or more. Replaced then, the key's live count was lost, and a window of 1 ms under load let
 * twice its limit through. So the clock is read again after the counter: the agent's clock has
 * one writer, and goes back only with the wall clock, so a reading taken after the counter was
 * seen is at least the one that made it, unless the wall clock stepped back.
 *
 * <p>With a {@link AllowedTally}, the counters double as the rule's count of allowed calls: a
 * counter is opened in the tally before it is installed; the thread that replaces it seals it
 * and adds the calls it allowed to the tally, as does {@link #close} for the counter of a key
 * leaving the store; a call that reaches a sealed counter counts itself.
 */
abstract class EpochWindowLimit implements LimitAlgorithm {
    final long limit;
    final long windowMillis;
    /** Two windows: a counter whose end is further ahead of now than this is from a clock stepped back. */
    private final long twoWindows;
    private final AllowedTally tally;
    /**
     * Whether a window's final count decides the next window's calls (the sliding window's
     * previous count): then the counter is sealed before the next one is made, that count is
     * the seal's, and a call that reaches a sealed counter counts in the next one instead.
     */
    private final boolean carriesCount;
    /**
     * The clock read again when a counter lies two windows or more ahead of a call's reading:
     * the agent's clock ({@link CoarseClock#millis}), or a test's.
     */
    private final LongSupplier clock;

    EpochWindowLimit(long limit, long windowMillis, AllowedTally tally, boolean carriesCount, LongSupplier clock) {
        this.limit = limit;
        this.windowMillis = windowMillis;
        this.twoWindows = 2 * windowMillis;
        this.tally = tally;
        this.carriesCount = carriesCount;
        this.clock = clock;
    }

    @Override
    public final Object newState(boolean exhausted) {
        WindowCounter first;
        if (!exhausted) {
            first = new WindowCounter(Long.MIN_VALUE, 0, Long.MIN_VALUE, 0);
        } else {
            long id = CoarseClock.millis() / windowMillis;
            first = new WindowCounter(id, 0, (id + 1) * windowMillis, limit);
        }
        if (tally != null) {
            tally.open(first);
        }
        return new WindowState(first);
    }

    @Override
    public final long acquire(Object state) {
        return acquireAt(state, CoarseClock.millis());
    }

    @Override
    public final long acquire(Object state, Object[] counted, int slot) {
        return acquireAt(state, CoarseClock.millis(), counted, slot);
    }

    /** Takes the call out of the counter it was counted in, whatever window is current now. */
    @Override
    public final void refund(Object counted) {
        ((WindowCounter) counted).decrement();
    }

    /** {@link #acquire} with the clock read at {@code now}; tests step the clock with it. */
    final long acquireAt(Object state, long now) {
        return acquireAt(state, now, null, 0);
    }

    /**
     * {@link #acquire(Object, Object[], int)} at {@code now}; with {@code counted} null, as
     * {@link #acquire(Object)}.
     */
    final long acquireAt(Object state, long now, Object[] counted, int slot) {
        WindowState current = (WindowState) state;
        WindowCounter counter = current.get();
        // now >= end (the window is over), or now < end - 2 windows (the clock stepped back), in
        // one unsigned comparison
        if (Long.compareUnsigned(now - counter.end + twoWindows, twoWindows) >= 0) {
            counter = advance(current, counter, now);
            if (now - counter.end + twoWindows < 0) {
                // this call's reading was old (see advance): decided on the clock as it reads now
                now = clock.getAsLong();
            }
        }
        long count = counter.incrementAndGet();
        while (count >= WindowCounter.SEALED && carriesCount) {
            // the window's final count was taken without this call: it counts in the next window
            // (which the thread that sealed the counter is installing), at the full weight of
            // the window before it, as a call at the boundary does
            WindowCounter sealed = counter;
            while ((counter = current.get()) == sealed) {
                Thread.yield();
            }
            count = counter.incrementAndGet();
        }
        if (count >= WindowCounter.SEALED) {
            count -= WindowCounter.SEALED;
            if (tally != null) {
                tally.late(counter, count);
            }
        }
        long outcome = decide(counter, count, now);
        if (counted != null) {
            counted[slot] = counter;
            if (!carriesCount && !Outcome.isAllowed(outcome)) {
                // In a rule of several limits a fixed window takes its own refused calls back out,
                // as the sliding window always does: the others take out the calls it refused, and
                // calls in flight on a burst push it over for a moment; those it refused then, kept,
                // left it over its limit for the rest of its window (a day's limit of 6, under an
                // hour's of 5, held at 7 to 28 after a burst of 100 once in a few hundred rounds,
                // with 5 calls allowed). Alone, a refused call in its count changes nothing.
                counter.decrement();
            }
        }
        return outcome;
    }

    /**
     * The counter of the window holding {@code now}, installing it if this is the window's first
     * call. A counter of the next window (another thread read the clock a tick later, or the clock
     * stepped back less than a window) is used as is. One further ahead is replaced only if the
     * clock, read again after it, is still that far behind it: the wall clock stepped back.
     * Otherwise {@code now} was old, and the window holding the clock's new reading is the one.
     */
    private WindowCounter advance(WindowState current, WindowCounter counter, long now) {
        long id = Math.floorDiv(now, windowMillis);
        while (counter.id < id || counter.id > id + 1) {
            if (counter.id > id + 1) {
                long again = Math.floorDiv(clock.getAsLong(), windowMillis);
                if (again != id) {
                    id = again;
                    continue;
                }
            }
            if (carriesCount) {
                // made before the seal: nothing between the seal and the install can fail (an
                // OutOfMemoryError there would leave the key's counter sealed and never replaced,
                // and every later call spinning on it)
                WindowCounter next = new WindowCounter(id, 0, (id + 1) * windowMillis, 0);
                // sealed first, so that the count carried is final: read before the swap, it
                // missed the calls of threads that had read this counter and incremented it after
                long sealed = counter.seal();
                if (sealed < 0) {
                    // another thread sealed it and is installing the next counter
                    Thread.yield();
                    counter = current.get();
                    continue;
                }
                next.previous = counter.id == id - 1 ? sealed : 0;
                // only the thread that sealed a counter replaces it; the volatile write publishes
                // the count carried with the counter
                current.set(next);
                return next;
            }
            long previous = counter.id == id - 1 ? counter.count() : 0;
            WindowCounter next = new WindowCounter(id, previous, (id + 1) * windowMillis, 0);
            if (tally == null) {
                if (current.compareAndSet(counter, next)) {
                    return next;
                }
            } else {
                // open before installing: no call reaches a counter the tally does not know
                tally.open(next);
                if (current.compareAndSet(counter, next)) {
                    tally.retire(counter);
                    // close() may have run meanwhile: it saw either this counter or the flag
                    if (current.closed) {
                        tally.retire(next);
                    }
                    return next;
                }
                tally.discard(next);
            }
            counter = current.get();
        }
        return counter;
    }

    /**
     * Retires the live counter of a key that left the store. The flag is set first, and
     * {@link #advance} reads it after installing a counter: one of the two sees the other, so no
     * counter installed by a call racing the removal stays open forever.
     */
    @Override
    public final void close(Object state) {
        if (tally != null) {
            WindowState current = (WindowState) state;
            current.closed = true;
            tally.retire(current.get());
        }
    }

    @Override
    public final boolean spent(Object state) {
        return spent(((WindowState) state).get(), CoarseClock.millis());
    }

    /** Whether a call at {@code now} with {@code counter} the key's latest counter would be refused. */
    abstract boolean spent(WindowCounter counter, long now);

    /** The outcome for the call that brought {@code counter} to {@code count} at {@code now}. */
    abstract long decide(WindowCounter counter, long count, long now);

    /** A key's state for one limit: its current window's counter. */
    static final class WindowState extends AtomicReference<WindowCounter> {
        private static final long serialVersionUID = 1L;
        /** Set when the key has left the store (see {@link #close}). */
        volatile boolean closed;

        WindowState(WindowCounter first) {
            super(first);
        }
    }
}
