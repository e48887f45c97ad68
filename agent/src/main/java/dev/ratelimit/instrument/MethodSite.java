package dev.ratelimit.instrument;

import java.lang.reflect.Field;

/**
 * One instrumented method, as seen at transform time: what it is called, whether its advice
 * passes the arguments, and the values of its {@code @RateLimited} annotation if it has one.
 * Which rules apply is decided from these facts whenever the rules are (re)loaded.
 */
final class MethodSite {
    final int id;
    final String className;
    final String methodName;
    final String simpleClassName;
    /** {@code SimpleClassName#method}: the rule name an annotation without a value refers to. */
    final String defaultRuleName;
    final boolean passesArguments;
    /** The method's descriptor; null where a test made the site without one. */
    final String descriptor;
    /** How many parameters the method takes. */
    final int parameterCount;
    /** Whether the method's code calls a method of its own name and descriptor (it may recurse). */
    final boolean callsItself;
    /** Null when the method is not annotated. */
    final AnnotationValues annotation;
    /**
     * Whether the file's method patterns apply: not to a record's equals, hashCode, toString and
     * component accessors, which only an annotation limits (a pattern never does, annotated or not).
     */
    final boolean patternsApply;
    /**
     * For a Kotlin {@code suspend} function, the binary name of its own continuation class: a call
     * whose last argument is one is the function resuming where it suspended, not a new call.
     * Null for any other method.
     */
    final String resumedBy;
    /**
     * Each continuation class's {@code label} field, made accessible, or {@link #NO_LABEL} where
     * it cannot be read. Kept by the class itself, not by the site: a site outlives a redeployed
     * application, and a field it kept would keep the application's loader; and a class of the
     * same name from another loader has a field of its own.
     */
    private static final ClassValue<Field> LABELS = new ClassValue<>() {
        @Override
        protected Field computeValue(Class<?> type) {
            try {
                Field field = type.getDeclaredField("label");
                if (field.getType() != int.class) {
                    return NO_LABEL;
                }
                field.setAccessible(true);
                return field;
            } catch (ReflectiveOperationException | RuntimeException unreadable) {
                return NO_LABEL;
            }
        }
    };
    private static final Field NO_LABEL;

    static {
        try {
            NO_LABEL = MethodSite.class.getDeclaredField("resumedBy");
        } catch (NoSuchFieldException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    MethodSite(int id, String className, String methodName, String simpleClassName, int parameterCount,
            boolean passesArguments, boolean callsItself, AnnotationValues annotation) {
        this(id, className, methodName, simpleClassName, parameterCount, passesArguments, callsItself, annotation,
                null);
    }

    MethodSite(int id, String className, String methodName, String simpleClassName, int parameterCount,
            boolean passesArguments, boolean callsItself, AnnotationValues annotation, String resumedBy) {
        this(id, className, methodName, null, simpleClassName, parameterCount, passesArguments, callsItself, annotation,
                resumedBy);
    }

    MethodSite(int id, String className, String methodName, String descriptor, String simpleClassName,
            int parameterCount, boolean passesArguments, boolean callsItself, AnnotationValues annotation,
            String resumedBy) {
        this(id, className, methodName, descriptor, simpleClassName, parameterCount, passesArguments, callsItself,
                annotation, resumedBy, true);
    }

    MethodSite(int id, String className, String methodName, String descriptor, String simpleClassName,
            int parameterCount, boolean passesArguments, boolean callsItself, AnnotationValues annotation,
            String resumedBy, boolean patternsApply) {
        this.id = id;
        this.descriptor = descriptor;
        this.className = className;
        this.methodName = methodName;
        this.simpleClassName = simpleClassName;
        this.defaultRuleName = simpleClassName + '#' + methodName;
        this.parameterCount = parameterCount;
        this.passesArguments = passesArguments;
        this.callsItself = callsItself;
        this.annotation = annotation;
        this.resumedBy = resumedBy;
        this.patternsApply = patternsApply;
    }

    /**
     * Whether {@code continuation}, of this suspend function's own continuation class, is resuming
     * the function: the compiler's state machine sets the sign bit of its {@code label} before it
     * calls the function again, and clears it once in; a call the function makes to itself passes
     * it cleared, and is a call of its own (for another key, it must be counted). Where the label
     * cannot be read (a named module that does not open the class to the agent), the class alone
     * says it is.
     */
    static boolean resuming(Object continuation) {
        Field field = LABELS.get(continuation.getClass());
        if (field == NO_LABEL) {
            return true;
        }
        try {
            return (field.getInt(continuation) & Integer.MIN_VALUE) != 0;
        } catch (IllegalAccessException | RuntimeException unreadable) {
            return true;
        }
    }

    /** The same method as if instrumented to pass its arguments. */
    MethodSite withArguments() {
        return new MethodSite(id, className, methodName, descriptor, simpleClassName, parameterCount, true,
                callsItself, annotation, resumedBy, patternsApply);
    }

    @Override
    public String toString() {
        return className + '#' + methodName;
    }

    /**
     * The method with its parameter types, {@code send(java.lang.String, long)}, which tells
     * overloads apart; without a descriptor, by the count of its parameters.
     */
    String signature() {
        if (descriptor == null) {
            return methodName + " taking " + parameterCount + (parameterCount == 1 ? " parameter" : " parameters");
        }
        StringBuilder text = new StringBuilder(methodName).append('(');
        net.bytebuddy.jar.asm.Type[] parameters = net.bytebuddy.jar.asm.Type.getArgumentTypes(descriptor);
        for (int i = 0; i < parameters.length; i++) {
            text.append(i == 0 ? "" : ", ").append(parameters[i].getClassName());
        }
        return text.append(')').toString();
    }

    /** The attributes of a {@code @RateLimited} annotation, read from the class file. */
    static final class AnnotationValues {
        final String ruleName;
        final long limit;
        final String window;
        final String key;

        AnnotationValues(String ruleName, long limit, String window, String key) {
            this.ruleName = ruleName;
            this.limit = limit;
            this.window = window;
            this.key = key;
        }
    }
}
