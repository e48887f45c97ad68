package dev.ratelimit;

import java.time.Duration;
import java.util.Objects;

/**
 * Thrown into the caller of a rate limited method when the call is rejected.
 *
 * <p>It names the rule and when to retry, never the key: keys can be personal data (an address,
 * a user id). It fills no stack trace, since rejections arrive exactly when the host is
 * overloaded.
 *
 * <p>Under the agent this class is loaded by the bootstrap class loader, so it is the same class
 * in every class loader that asks its parent first. A loader with a copy of its own (defined
 * before the agent was attached, or a child-first loader over this jar) gets its copy when the
 * limited method's caller is its code.
 */
public class RateLimitExceededException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String rule;
    private final Duration retryAfter;

    /**
     * Creates the exception.
     *
     * @param rule the name of the rule that rejected the call
     * @param retryAfter how long until the rule would allow a call again; never negative
     */
    public RateLimitExceededException(String rule, Duration retryAfter) {
        super("Rate limit exceeded: rule '" + rule + "', retry after "
                + millis(Objects.requireNonNull(retryAfter, "retryAfter")) + " ms", null, false, false);
        this.rule = Objects.requireNonNull(rule, "rule");
        this.retryAfter = retryAfter.isNegative() ? Duration.ZERO : retryAfter;
    }

    /**
     * The duration in milliseconds, {@code Long.MAX_VALUE} for one too long to count in them:
     * {@code ChronoUnit.FOREVER.getDuration()}, a natural "never", made {@code toMillis} throw, and
     * this constructor with it (the review of the limit algorithms, thirty-fourth round).
     */
    static long millis(Duration duration) {
        try {
            return duration.toMillis();
        } catch (ArithmeticException tooLong) {
            return duration.isNegative() ? 0 : Long.MAX_VALUE;
        }
    }

    /** The name of the rule that rejected the call. */
    public String rule() {
        return rule;
    }

    /** How long until the rule allows a call again. */
    public Duration retryAfter() {
        return retryAfter;
    }
}
