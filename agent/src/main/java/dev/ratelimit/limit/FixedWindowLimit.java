package dev.ratelimit.limit;

/** Fixed windows: the window's count after this call decides, and the window's end is the retry time. */
final class FixedWindowLimit extends EpochWindowLimit {

    FixedWindowLimit(long limit, long windowMillis, AllowedTally tally) {
        this(limit, windowMillis, tally, CoarseClock::millis);
    }

    /** With the clock read again for a counter far ahead of a call's reading (see {@link EpochWindowLimit}); for tests. */
    FixedWindowLimit(long limit, long windowMillis, AllowedTally tally, java.util.function.LongSupplier clock) {
        super(limit, windowMillis, tally, false, clock);
    }

    @Override
    long decide(WindowCounter counter, long count, long now) {
        return Decisions.fixedWindow(count, limit, counter.end - now);
    }

    @Override
    boolean spent(WindowCounter counter, long now) {
        return counter.end > now && counter.count() >= limit;
    }

    @Override
    public long retentionMillis() {
        return windowMillis;
    }
}
