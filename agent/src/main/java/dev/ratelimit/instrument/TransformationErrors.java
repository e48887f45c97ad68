package dev.ratelimit.instrument;

import dev.ratelimit.bootstrap.RateLimitBridge;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts classes instrumented and classes that failed to instrument; the first failure is logged
 * with its stack trace, later ones in one line each at debug level. A class that fails stays as
 * it was: not limited, never broken.
 */
final class TransformationErrors {
    private static final System.Logger LOG = System.getLogger("dev.ratelimit");

    private final AtomicLong transformed = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();

    void transformed(String typeName) {
        transformed.incrementAndGet();
        LOG.log(Level.DEBUG, () -> "rate-limit-agent: instrumented " + typeName);
    }

    void failed(String typeName, Throwable error) {
        RateLimitBridge.transformationError();
        if (errors.getAndIncrement() == 0) {
            LOG.log(Level.ERROR, "rate-limit-agent: could not instrument " + typeName
                    + "; it runs without limits (further failures are logged at debug level)", error);
        } else {
            LOG.log(Level.DEBUG, () -> "rate-limit-agent: could not instrument " + typeName + ": " + error);
        }
    }

    long transformed() {
        return transformed.get();
    }

    long errors() {
        return errors.get();
    }
}
