package dev.ratelimit.limit;

/** Fixed windows: the window's count after this call decides, and the window's end is the retry time. */
final class FixedWindowLimit extends EpochWindowLimit {

    FixedWindowLimit(long limit, long windowMillis, AllowedTally tally) {
        super(limit, windowMillis, tally, false);
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
