package dev.ratelimit.limit;

/**
 * A sliding window estimated from two fixed windows: the current window's count plus the
 * previous window's count weighted by how much of it still lies inside the sliding window.
 * Unlike a fixed window it allows no burst of twice the limit across a window boundary.
 *
 * <p>Increment-first as the fixed window: the current window's {@code incrementAndGet} returns
 * the count that decides, with the previous window's weighted count added. A rejected call is
 * then taken back out of the count: counted, the attempts of a client sending twice the limit
 * filled each window, and so, carried over, the next one, and it was never allowed again (a
 * fixed window lets it have the limit in each window). Taking it out after the decision keeps
 * the bound exact: a call is allowed only if its own increment, over the allowed calls and the
 * rejected ones not yet taken out, stays within the limit. The previous window is frozen when
 * the current one starts, and counts at most {@code limit} calls.
 */
final class SlidingWindowLimit extends EpochWindowLimit {

    SlidingWindowLimit(long limit, long windowMillis) {
        super(limit, windowMillis, null, true);
    }

    @Override
    long decide(WindowCounter counter, long count, long now) {
        long outcome = decide(count, counter.previous, now - counter.id * windowMillis, limit, windowMillis);
        if (!Outcome.isAllowed(outcome)) {
            counter.decrement();
        }
        return outcome;
    }

    /**
     * The decision, wherever the counts were kept (here, or in a Redis script). A rejected call
     * is taken back out of the count by the caller, so a retry's own call takes its place: the
     * retry time is the first millisecond at which the carried count, rounded down as the
     * decision rounds it, leaves room for it (no other call in between).
     *
     * @param count the current window's count after this call
     * @param previousCount the previous window's final count
     * @param elapsed milliseconds since the current window started
     */
    static long decide(long count, long previousCount, long elapsed, long limit, long windowMillis) {
        long into = Math.max(0, Math.min(windowMillis, elapsed));
        long previous = Math.min(previousCount, limit);
        // previous * (window - elapsed) / window, rounded down
        long carried = mulDiv(previous, windowMillis - into, windowMillis);
        long estimate = count + carried;
        if (estimate <= limit) {
            return Outcome.allowed(limit - estimate);
        }
        // a counter of the window after now's (another thread read the clock later, or the clock
        // stepped back by less than a window) ends that much later than a window from now
        long toEnd = windowMillis - into + Math.max(0, -elapsed);
        if (count <= limit && previous > 0) {
            // wait until floor(previous * left / window) <= limit - count, where left is the time
            // left in the window: previous * left < (limit - count + 1) * window
            long room = limit - count;
            return Outcome.rejected(toEnd - largestBelow(room + 1, windowMillis, previous));
        }
        // next window: this window's calls (at most the limit) carry over, and floor(limit * left
        // / window) <= limit - 1 as soon as left < window, a millisecond after the window starts
        return Outcome.rejected(toEnd + 1);
    }

    /**
     * The largest {@code s >= 0} with {@code c * s < a * b}, for {@code a, b >= 1} and {@code c >=
     * 1}: with {@code c * s / b} rounded as {@link #mulDiv} rounds it, the largest {@code s} with
     * {@code mulDiv(c, s, b) < a}, which the decision at {@code s} ms left checks.
     */
    static long largestBelow(long a, long b, long c) {
        if (b <= Long.MAX_VALUE / a) {
            return (a * b - 1) / c;
        }
        // estimated in doubles, then moved to where mulDiv, which rounds in doubles too once c * s
        // does not fit a long, says so: the estimate alone was a millisecond early at times (a
        // limit of about 1000 a second over 366 days). mulDiv does not decrease as s grows, and
        // the estimate is off by a step or two
        long s = Math.max(0, (long) Math.ceil((double) a * (double) b / (double) c) - 1);
        while (s > 0 && mulDiv(c, s, b) >= a) {
            s--;
        }
        while (mulDiv(c, s + 1, b) < a) {
            s++;
        }
        return s;
    }

    /**
     * {@code a * b / c} rounded down, for {@code a, b >= 0} and {@code c > 0}. In integers where
     * the product fits a long; else in doubles (a limit of 10^9 over a year of milliseconds
     * overflowed, and the previous window's calls were forgotten), where a call more or less
     * in a count that large does not matter.
     */
    static long mulDiv(long a, long b, long c) {
        if (a == 0 || b <= Long.MAX_VALUE / a) {
            return a * b / c;
        }
        return (long) ((double) a * (double) b / (double) c);
    }

    /**
     * In the counter's window, its count and the previous window's weighted part leave no room;
     * in the window after it, its count weighted leaves none.
     */
    @Override
    boolean spent(WindowCounter counter, long now) {
        long count = counter.count();
        if (counter.end > now) {
            long into = Math.max(0, Math.min(windowMillis, now - counter.id * windowMillis));
            return count + mulDiv(Math.min(counter.previous, limit), windowMillis - into, windowMillis) >= limit;
        }
        if (counter.end > now - windowMillis) {
            long into = now - counter.end;
            return mulDiv(Math.min(count, limit), windowMillis - into, windowMillis) >= limit;
        }
        return false;
    }

    @Override
    public long retentionMillis() {
        return 2 * windowMillis;
    }
}
