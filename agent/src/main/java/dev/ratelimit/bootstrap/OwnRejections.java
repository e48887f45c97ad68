package dev.ratelimit.bootstrap;

import dev.ratelimit.RateLimitExceededException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.time.Duration;

/**
 * The API's exception as an application's class loader knows it. Loaders that ask their parent
 * first find the agent's copy, on the boot class path; a loader that defined its own copy of the
 * API jar's class first (before an attach put the agent's there, or a child-first loader over a
 * web application's {@code WEB-INF/lib}) knows another class of the same name, which the agent's
 * exception is not an instance of: the application's {@code catch (RateLimitExceededException e)}
 * missed every rejection, and the exception escaped its handlers (review of the twenty-fourth
 * round). A rejection is thrown as the woven class's loader's copy, and the servlet advice reads
 * a rejection of either copy. Loaded at the first rejection, not at start-up.
 */
public final class OwnRejections {
    private static final String NAME = RateLimitExceededException.class.getName();

    /** Per woven class: its loader's own copy's constructor, or null when that is the agent's. */
    private static final ClassValue<Constructor<?>> CONSTRUCTORS = new ClassValue<>() {
        @Override
        protected Constructor<?> computeValue(Class<?> woven) {
            ClassLoader loader = woven.getClassLoader();
            if (loader == null) {
                return null;
            }
            try {
                Class<?> known = Class.forName(NAME, false, loader);
                if (known == RateLimitExceededException.class || !Throwable.class.isAssignableFrom(known)) {
                    return null;
                }
                return known.getConstructor(String.class, Duration.class);
            } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
                // the loader knows no copy it can hand out: the agent's is thrown
                return null;
            }
        }
    };

    /** Per class named as the API's exception but not the agent's: its {@code rule()} and {@code retryAfter()}. */
    private static final ClassValue<Method[]> READERS = new ClassValue<>() {
        @Override
        protected Method[] computeValue(Class<?> type) {
            try {
                Method rule = type.getMethod("rule");
                Method retryAfter = type.getMethod("retryAfter");
                if (rule.getReturnType() == String.class && retryAfter.getReturnType() == Duration.class) {
                    return new Method[] {rule, retryAfter};
                }
            } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
                // not readable: not taken for a rejection
            }
            return null;
        }
    };

    private OwnRejections() {
    }

    /**
     * The rejection as the copy of the exception {@code woven}'s loader knows: the rejection
     * itself when that is the agent's copy.
     *
     * @throws ReflectiveOperationException if the loader's copy could not be made
     */
    static Throwable in(Class<?> woven, RateLimitExceededException rejection) throws ReflectiveOperationException {
        Constructor<?> own = CONSTRUCTORS.get(woven);
        return own == null ? rejection : (Throwable) own.newInstance(rejection.rule(), rejection.retryAfter());
    }

    /**
     * A rejection thrown as another loader's copy of the exception, read into the agent's copy;
     * null when {@code thrown} is not one.
     */
    public static RateLimitExceededException read(Throwable thrown) {
        for (Class<?> type = thrown.getClass(); type != null && type != Throwable.class; type = type.getSuperclass()) {
            if (type.getName().equals(NAME)) {
                Method[] readers = READERS.get(type);
                if (readers == null) {
                    return null;
                }
                try {
                    Object rule = readers[0].invoke(thrown);
                    Object retryAfter = readers[1].invoke(thrown);
                    return rule == null || retryAfter == null ? null
                            : new RateLimitExceededException((String) rule, (Duration) retryAfter);
                } catch (ReflectiveOperationException | RuntimeException e) {
                    return null;
                }
            }
        }
        return null;
    }
}
