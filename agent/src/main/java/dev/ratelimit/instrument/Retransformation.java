package dev.ratelimit.instrument;

import java.lang.System.Logger.Level;
import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.List;

/**
 * Retransforms classes so that the transformer sees them again. The JVM retransforms a batch all
 * or nothing: one class it refuses (another agent changed its shape since, say) leaves every
 * class of the batch as it was. So a refused batch is tried again one class at a time, and only
 * the classes refused alone are reported, each by name. A class in the error state (its static
 * initializer failed) is refused with {@code InternalError} ("class redefinition failed: invalid
 * class"), an {@code Error} that is no {@code LinkageError}: it once ended an attach half done,
 * nothing loaded limited (test-app-jetty; the review of the thirty-fourth round).
 */
final class Retransformation {
    private Retransformation() {
    }

    /**
     * Retransforms {@code classes}; {@code why} completes the warning for those that cannot be
     * ("... for the new rules"). Returns the classes refused.
     */
    static List<Class<?>> retransform(Instrumentation instrumentation, List<Class<?>> classes, String why) {
        List<Class<?>> refused = new ArrayList<>();
        if (classes.isEmpty()) {
            return refused;
        }
        try {
            instrumentation.retransformClasses(classes.toArray(new Class<?>[0]));
            return refused;
        } catch (Exception | LinkageError | InternalError batchRefused) {
            for (Class<?> type : classes) {
                try {
                    instrumentation.retransformClasses(type);
                } catch (Exception | LinkageError | InternalError e) {
                    refused.add(type);
                    AgentLog.LOG.log(Level.WARNING, "rate-limit-agent: could not retransform " + type.getName() + " "
                            + why + "; it keeps its code as it was: " + e);
                }
            }
        }
        return refused;
    }
}
