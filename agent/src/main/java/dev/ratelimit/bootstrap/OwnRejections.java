package dev.ratelimit.bootstrap;

import dev.ratelimit.RateLimitExceededException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.time.Duration;

/**
 * The API's exception as the calling code's class loader knows it. Loaders that ask their parent
 * first find the agent's copy, on the boot class path; a loader that defined its own copy of the
 * API jar's class first (the application's, before an attach put the agent's there; a child-first
 * loader over a web application's {@code WEB-INF/lib} or a plugin's jars) knows another class of
 * the same name, which the agent's exception is not an instance of, so a {@code catch
 * (RateLimitExceededException e)} in its code missed every rejection (review of the twenty-fourth
 * round). A rejection is thrown as the copy that the limited method's caller knows: the code that
 * catches it is most often there. (Chosen by the limited method's own loader, the first version
 * broke a host that catches what a plugin's method throws.) The servlet advice reads a rejection
 * of any copy. Until a loader has a copy of its own ({@link ExceptionCopies}), a rejection is the
 * agent's copy at once. Loaded at the first rejection, not at start-up.
 */
public final class OwnRejections {
    private static final String NAME = RateLimitExceededException.class.getName();

    /** Frames walked at most to find the limited method's caller. */
    private static final int MAX_FRAMES = 64;
    /**
     * Hidden frames shown: a method reference's caller is the class that made it (its hidden
     * class, in that class's loader), which is skipped otherwise, so the limited method's caller
     * was taken to be the JDK code that ran it (a stream, an executor): the agent's copy.
     */
    private static final StackWalker WALKER = StackWalker.getInstance(java.util.EnumSet.of(
            StackWalker.Option.RETAIN_CLASS_REFERENCE, StackWalker.Option.SHOW_HIDDEN_FRAMES));

    /** Per calling class: its loader's own copy's constructor, or null when that is the agent's. */
    private static final ClassValue<Constructor<?>> CONSTRUCTORS = new ClassValue<>() {
        @Override
        protected Constructor<?> computeValue(Class<?> caller) {
            ClassLoader loader = caller.getClassLoader();
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
     * The rejection as the copy of the exception that the caller of {@code woven}'s limited method
     * knows (the frame right below the method's, whatever its class, past a bridge to it and past
     * reflection's and method handles' frames; {@code woven}'s loader when there is none in
     * reach): the rejection itself when that is the agent's copy.
     *
     * @throws ReflectiveOperationException if the loader's copy could not be made
     */
    static Throwable in(Class<?> woven, RateLimitExceededException rejection) throws ReflectiveOperationException {
        if (!ExceptionCopies.seen()) {
            // no loader has a copy of its own: every loader finds the agent's, and no stack is walked
            return rejection;
        }
        Class<?> caller = WALKER.walk(frames -> {
            StackWalker.StackFrame limited = null;
            for (java.util.Iterator<StackWalker.StackFrame> it = frames.limit(MAX_FRAMES).iterator(); it.hasNext(); ) {
                StackWalker.StackFrame frame = it.next();
                Class<?> type = frame.getDeclaringClass();
                if (limited == null) {
                    if (type == woven) {
                        limited = frame;
                    }
                } else if (!isBridgeTo(woven, limited, frame) && !isPlumbing(type)) {
                    // the frame right below the limited method's, also when it is of the same
                    // class (a call from another method of it, a lambda in it, recursion): only
                    // a bridge to the method (never woven) is passed over, to reach its caller
                    return type;
                }
            }
            return null;
        });
        Constructor<?> own = CONSTRUCTORS.get(caller != null ? caller : woven);
        return own == null ? rejection : (Throwable) own.newInstance(rejection.rule(), rejection.retryAfter());
    }

    /** Frames of reflection and method handles, shown with the hidden ones: never the caller. */
    private static boolean isPlumbing(Class<?> type) {
        String name = type.getName();
        return name.startsWith("jdk.internal.reflect.") || (type.getClassLoader() == null
                && (name.startsWith("java.lang.invoke.") || name.startsWith("java.lang.reflect.")));
    }

    /** Whether {@code frame} is of a bridge method of {@code woven} to the {@code limited} one. */
    private static boolean isBridgeTo(Class<?> woven, StackWalker.StackFrame limited, StackWalker.StackFrame frame) {
        if (frame.getDeclaringClass() != woven || !frame.getMethodName().equals(limited.getMethodName())
                || frame.getDescriptor().equals(limited.getDescriptor())) {
            return false;
        }
        try {
            return woven.getDeclaredMethod(frame.getMethodName(), frame.getMethodType().parameterArray()).isBridge();
        } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
            return false;
        }
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
