package dev.ratelimit.config;

import java.time.Duration;
import java.util.Objects;

/** One limit of a rule: at most {@code limit} calls per {@code window}. */
public final class LimitSpec {

    private final long limit;
    private final Duration window;

    /**
     * @throws IllegalArgumentException when {@code limit} is not positive or {@code window} is not
     *         between 1ms and {@link Durations#MAX}
     */
    public LimitSpec(long limit, Duration window) {
        if (limit <= 0) {
            throw new IllegalArgumentException("limit must be a positive whole number, got " + limit);
        }
        Objects.requireNonNull(window, "window");
        if (window.compareTo(Duration.ofMillis(1)) < 0 || window.compareTo(Durations.MAX) > 0) {
            throw new IllegalArgumentException("window must be between 1ms and 366d, got " + window);
        }
        this.limit = limit;
        this.window = window;
    }

    /** Calls allowed per window; positive. */
    public long limit() {
        return limit;
    }

    /** The window's length. */
    public Duration window() {
        return window;
    }

    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof LimitSpec)) {
            return false;
        }
        LimitSpec that = (LimitSpec) other;
        return limit == that.limit && window.equals(that.window);
    }

    @Override
    public int hashCode() {
        return Objects.hash(limit, window);
    }

    /** {@code 300 per 1m}. */
    @Override
    public String toString() {
        return limit + " per " + Durations.format(window);
    }
}
