package dev.ratelimit.limit;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/** The count of one window of one key; {@code previous} is the count of the window before it. */
final class WindowCounter extends AtomicLong {
    private static final long serialVersionUID = 1L;

    final long id;
    final long previous;

    WindowCounter(long id, long previous) {
        this.id = id;
        this.previous = previous;
    }

    /**
     * The counter of window {@code id}, installing it if this is the window's first call. A
     * counter from a later window (another thread read the clock a tick later) is used as is.
     */
    static WindowCounter current(AtomicReference<WindowCounter> state, long id) {
        WindowCounter counter = state.get();
        while (counter.id < id) {
            long previous = counter.id == id - 1 ? counter.get() : 0;
            WindowCounter next = new WindowCounter(id, previous);
            if (state.compareAndSet(counter, next)) {
                return next;
            }
            counter = state.get();
        }
        return counter;
    }
}
