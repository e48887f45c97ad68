package dev.ratelimit.limit;

import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/** What one rule has done since it was loaded; read by logs and JMX. */
public final class RuleMetrics {
    final LongAdder allowed = new LongAdder();
    final LongAdder rejected = new LongAdder();
    final LongAdder exempted = new LongAdder();
    final LongAdder forgedTokens = new LongAdder();
    final LongAdder storeErrors = new LongAdder();
    final LongAdder passedCommitted = new LongAdder();
    /** Allowed calls the limiter counts itself, or none. */
    private final LongSupplier allowedByLimiter;

    RuleMetrics(LongSupplier allowedByLimiter) {
        this.allowedByLimiter = allowedByLimiter;
    }

    public long allowed() {
        return allowed.sum() + allowedByLimiter.getAsLong();
    }

    /** Calls over the limit; in shadow mode these were let through. */
    public long rejected() {
        return rejected.sum();
    }

    public long exempted() {
        return exempted.sum();
    }

    public long forgedTokens() {
        return forgedTokens.sum();
    }

    public long storeErrors() {
        return storeErrors.sum();
    }

    /** Rejected requests let through because their response was already committed. */
    public long passedCommitted() {
        return passedCommitted.sum();
    }

    /** Counts a rejected request that passed because its response was already committed. */
    public void countPassedCommitted() {
        passedCommitted.increment();
    }

    /** Counts a request whose token header did not match any accepted token. */
    public void countForgedToken() {
        forgedTokens.increment();
    }
}
