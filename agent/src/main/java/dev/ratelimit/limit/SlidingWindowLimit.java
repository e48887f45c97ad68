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
        this(limit, windowMillis, CoarseClock::millis);
    }

    /** With the clock read again for a counter far ahead of a call's reading (see {@link EpochWindowLimit}); for tests. */
    SlidingWindowLimit(long limit, long windowMillis, java.util.function.LongSupplier clock) {
        super(limit, windowMillis, null, true, clock);
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
     * The largest {@code s >= 0} with {@code c * s < a * b}, for {@code a, b, c >= 1}: the largest
     * {@code s} with {@code mulDiv(c, s, b) < a}, which the decision at {@code s} ms left checks.
     * Where it is called the answer is less than the window, so it fits a long even when
     * {@code a * b} does not.
     */
    static long largestBelow(long a, long b, long c) {
        if (b <= Long.MAX_VALUE / a) {
            return (a * b - 1) / c;
        }
        return wide(a, b, c, true);
    }

    /**
     * {@code a * b / c} rounded down, exactly, for {@code a >= 0}, {@code 0 <= b <= c}: in one
     * long multiplication where the product fits (a limit of 10^9 over a year of milliseconds
     * overflows a long). The Redis script computes the same value, so that the calls it keeps are
     * the calls this decides to allow.
     */
    static long mulDiv(long a, long b, long c) {
        if (a == 0 || b <= Long.MAX_VALUE / a) {
            return a * b / c;
        }
        if (c >= 1L << 52) {
            return wide(a, b, c, false);
        }
        // a * b / c = (a / c) * b + (a % c) * b / c; the second part, below b, estimated in
        // doubles is within 2 of the truth, so the remainder it leaves, worked in longs that may
        // wrap, is the true one (between -3c and 3c), and moves the estimate onto it
        long qa = a / c;
        long ra = a - qa * c;
        long q = (long) ((double) ra * (double) b / (double) c);
        long rest = ra * b - q * c;
        while (rest < 0) {
            q--;
            rest += c;
        }
        while (rest >= c) {
            q++;
            rest -= c;
        }
        return qa * b + q;
    }

    /**
     * {@code a * b / c} rounded down, or with {@code below} the largest {@code s} with {@code c * s
     * < a * b}, for {@code a, b >= 0} and {@code c > 0} whose answer fits a long, without forming
     * {@code a * b}: {@code q} and {@code r} are the quotient and remainder by {@code c} of {@code a}
     * times the bits of {@code b} read so far, doubled for each further bit and {@code a} added for
     * each one set, every sum kept below {@code 2c} by comparing with what is left to {@code c}.
     */
    private static long wide(long a, long b, long c, boolean below) {
        long qa = a / c;
        long ra = a % c;
        long q = 0;
        long r = 0;
        for (int bit = 63 - Long.numberOfLeadingZeros(b); bit >= 0; bit--) {
            q <<= 1;
            if (r >= c - r) {
                r -= c - r;
                q++;
            } else {
                r <<= 1;
            }
            if ((b >>> bit & 1) != 0) {
                q += qa;
                if (r >= c - ra) {
                    r -= c - ra;
                    q++;
                } else {
                    r += ra;
                }
            }
        }
        return below && r == 0 ? q - 1 : q;
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
