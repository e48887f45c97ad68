package dev.ratelimit.limit;

/** Fixed windows: the window's count after this call decides, and the window's end is the retry time. */
final class FixedWindowLimit extends EpochWindowLimit {

    FixedWindowLimit(long limit, long windowMillis) {
        super(limit, windowMillis);
    }

    @Override
    long decide(WindowCounter counter, long count, long now) {
        return Decisions.fixedWindow(count, limit, (counter.id + 1) * windowMillis - now);
    }

    @Override
    public long retentionMillis() {
        return windowMillis;
    }
}
