package dev.ratelimit.limit;

/**
 * The result of one acquire, packed in a {@code long} so the allowed path allocates nothing:
 * zero or more is an allowed call and the calls remaining; below zero is a rejection and
 * encodes the milliseconds until a call would be allowed.
 */
public final class Outcome {
    private Outcome() {
    }

    /** An allowed call with {@code remaining} calls left in the tightest limit. */
    public static long allowed(long remaining) {
        return Math.max(0, remaining);
    }

    /**
     * An allowed call that was not counted: the store failed and the rule's {@code on-error} let
     * it through. No count reaches {@code Long.MAX_VALUE} calls left, so this is no real
     * outcome. An HTTP response leaves the rule's fields out for it, since how much of the
     * quota is left is not known (saying 0 tells a client to stop).
     */
    public static final long ALLOWED_UNCOUNTED = Long.MAX_VALUE;

    /** A rejected call that may be retried after {@code retryMillis} (at least one). */
    public static long rejected(long retryMillis) {
        return -Math.max(1, retryMillis);
    }

    public static boolean isAllowed(long outcome) {
        return outcome >= 0;
    }

    /** Calls left after an allowed call. */
    public static long remaining(long outcome) {
        return Math.max(0, outcome);
    }

    /** Milliseconds until a rejected call may be retried. */
    public static long retryMillis(long outcome) {
        return outcome < 0 ? -outcome : 0;
    }

    /** Combines the outcomes of several limits on one call: rejected if any is. */
    public static long combine(long a, long b) {
        // Both allowed: the fewer remaining. Either rejected: the later retry. Both are the minimum.
        return Math.min(a, b);
    }
}
