package dev.ratelimit.instrument;

import dev.ratelimit.bootstrap.RateLimitBridge;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicLong;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.utility.JavaModule;

/**
 * Counts classes instrumented and classes that failed to instrument; the first failure is logged
 * with its stack trace, later ones in one line each at debug level. A class that fails stays as
 * it was: not limited, never broken.
 */
final class TransformationErrors extends AgentBuilder.Listener.Adapter {
    private static final System.Logger LOG = System.getLogger("dev.ratelimit");

    private final AtomicLong transformed = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();

    @Override
    public void onTransformation(TypeDescription type, ClassLoader loader, JavaModule module, boolean loaded,
            DynamicType dynamicType) {
        transformed.incrementAndGet();
        LOG.log(Level.DEBUG, () -> "rate-limit-agent: instrumented " + type.getName());
    }

    @Override
    public void onError(String typeName, ClassLoader loader, JavaModule module, boolean loaded, Throwable error) {
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
