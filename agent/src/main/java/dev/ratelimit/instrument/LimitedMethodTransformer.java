package dev.ratelimit.instrument;

import dev.ratelimit.bootstrap.RateLimitBridge;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.annotation.AnnotationDescription;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.matcher.ElementMatchers;
import net.bytebuddy.pool.TypePool;

/**
 * Inlines the limit check into methods named by a rule's {@code match: method} pattern and into
 * methods annotated with any annotation whose simple name is {@code RateLimited}.
 *
 * <p>Each such method becomes a {@link MethodSite}; its id and return kind are bound into the
 * advice as constants, so the advice reads nothing reflectively at run time.
 */
final class LimitedMethodTransformer {
    private static final String ANNOTATION_SIMPLE_NAME = "RateLimited";

    private final MethodSites sites;
    private final RuleBookSource rules;
    private final Advice.ExceptionHandler exceptionHandler;
    private final TypeDescription methodEnter;
    private final TypeDescription argumentsEnter;
    private final TypeDescription valueExit;
    private final TypeDescription voidExit;
    private final ClassFileLocator adviceLocator;

    /** Where the transformer reads the current rules; they change on reload. */
    interface RuleBookSource {
        RuleBook current();
    }

    LimitedMethodTransformer(MethodSites sites, RuleBookSource rules, Advice.ExceptionHandler exceptionHandler) {
        this.sites = sites;
        this.rules = rules;
        ClassLoader ours = LimitedMethodTransformer.class.getClassLoader();
        this.adviceLocator = ClassFileLocator.ForClassLoader.of(ours);
        TypePool pool = TypePool.Default.of(adviceLocator);
        this.methodEnter = pool.describe(MethodEnterAdvice.class.getName()).resolve();
        this.argumentsEnter = pool.describe(ArgumentsEnterAdvice.class.getName()).resolve();
        this.valueExit = pool.describe(ValueExitAdvice.class.getName()).resolve();
        this.voidExit = pool.describe(VoidExitAdvice.class.getName()).resolve();
        this.exceptionHandler = exceptionHandler;
    }

    /** Types worth transforming: named by a method rule, or declaring an annotated method. */
    ElementMatcher<TypeDescription> typeMatcher() {
        return new ElementMatcher<TypeDescription>() {
            @Override
            public boolean matches(TypeDescription type) {
                if (type.isInterface() || type.isAnnotation()) {
                    return false;
                }
                if (rules.current().namesClass(type.getName())) {
                    return true;
                }
                for (MethodDescription.InDefinedShape method : type.getDeclaredMethods()) {
                    if (rateLimited(method) != null) {
                        return true;
                    }
                }
                return false;
            }
        };
    }

    /** Adds the advice to {@code builder} for {@code type}, defined by {@code loader}. */
    DynamicType.Builder<?> transform(DynamicType.Builder<?> builder, TypeDescription type, ClassLoader loader) {
        RuleBook book = rules.current();
        for (MethodDescription.InDefinedShape method : type.getDeclaredMethods()) {
            AnnotationDescription annotation = rateLimited(method);
            if (annotation == null && !book.namesMethod(type.getName(), method.getName())) {
                continue;
            }
            if (!limitable(method)) {
                continue;
            }
            MethodSite.AnnotationValues values = annotation == null ? null : values(annotation);
            boolean passesArguments = !method.getParameters().isEmpty()
                    && usesArguments(book, type, method, values);
            int site = sites.register(loader, type.getName(), method.getName(), method.getDescriptor(),
                    type.getSimpleName(), passesArguments, values);
            builder = builder.visit(advice(site, passesArguments, method).on(ElementMatchers.is(method)));
        }
        return builder;
    }

    private Advice advice(int site, boolean passesArguments, MethodDescription method) {
        return Advice.withCustomMapping()
                .bind(SiteId.class, site)
                .bind(ReturnKind.class, returnKind(method.getReturnType().asErasure()))
                .to(passesArguments ? argumentsEnter : methodEnter,
                        method.getReturnType().represents(void.class) ? voidExit : valueExit, adviceLocator)
                .withExceptionHandler(exceptionHandler);
    }

    /**
     * Weaves the advice into every method {@code type} declares, alternating the two enter
     * advices, with a site that is never registered: the bytes are thrown away. For
     * {@link AdviceTransformer#warmUp()} only.
     */
    DynamicType.Builder<?> warmUp(DynamicType.Builder<?> builder, TypeDescription type) {
        boolean passesArguments = false;
        for (MethodDescription.InDefinedShape method : type.getDeclaredMethods()) {
            if (limitable(method)) {
                builder = builder.visit(advice(-1, passesArguments, method).on(ElementMatchers.is(method)));
                passesArguments = !passesArguments;
            }
        }
        return builder;
    }

    private static boolean limitable(MethodDescription method) {
        return !method.isConstructor() && !method.isTypeInitializer() && !method.isAbstract() && !method.isNative()
                && !method.isBridge() && !method.isSynthetic();
    }

    private static boolean usesArguments(RuleBook book, TypeDescription type, MethodDescription method,
            MethodSite.AnnotationValues values) {
        MethodSite probe = new MethodSite(-1, type.getName(), method.getName(), type.getSimpleName(), false, values);
        return book.needsArguments(probe);
    }


    /** Any annotation whose simple name is RateLimited: ours, or the application's own. */
    static AnnotationDescription rateLimited(MethodDescription method) {
        for (AnnotationDescription annotation : method.getDeclaredAnnotations()) {
            String name = annotation.getAnnotationType().getName();
            int cut = Math.max(name.lastIndexOf('.'), name.lastIndexOf('$'));
            if (name.regionMatches(cut + 1, ANNOTATION_SIMPLE_NAME, 0, ANNOTATION_SIMPLE_NAME.length())
                    && name.length() - cut - 1 == ANNOTATION_SIMPLE_NAME.length()) {
                return annotation;
            }
        }
        return null;
    }

    /** The annotation's attributes; those an application's own annotation lacks take our defaults. */
    private static MethodSite.AnnotationValues values(AnnotationDescription annotation) {
        return new MethodSite.AnnotationValues(
                attribute(annotation, "value", String.class, ""),
                attribute(annotation, "limit", Number.class, 10L).longValue(),
                attribute(annotation, "window", String.class, "1s"),
                attribute(annotation, "key", String.class, "global"));
    }

    private static <T> T attribute(AnnotationDescription annotation, String name, Class<T> type, T fallback) {
        for (MethodDescription.InDefinedShape property : annotation.getAnnotationType().getDeclaredMethods()) {
            if (property.getName().equals(name)) {
                Object value = annotation.getValue(property).resolve();
                return type.isInstance(value) ? type.cast(value) : fallback;
            }
        }
        return fallback;
    }

    private static int returnKind(TypeDescription type) {
        if (type.isPrimitive()) {
            switch (type.getName()) {
                case "boolean": return RateLimitBridge.RETURNS_BOOLEAN;
                case "byte": return RateLimitBridge.RETURNS_BYTE;
                case "short": return RateLimitBridge.RETURNS_SHORT;
                case "char": return RateLimitBridge.RETURNS_CHAR;
                case "int": return RateLimitBridge.RETURNS_INT;
                case "long": return RateLimitBridge.RETURNS_LONG;
                case "float": return RateLimitBridge.RETURNS_FLOAT;
                case "double": return RateLimitBridge.RETURNS_DOUBLE;
                default: return RateLimitBridge.RETURNS_NULL;
            }
        }
        switch (type.getName()) {
            case "java.util.Optional": return RateLimitBridge.RETURNS_OPTIONAL;
            case "java.util.OptionalInt": return RateLimitBridge.RETURNS_OPTIONAL_INT;
            case "java.util.OptionalLong": return RateLimitBridge.RETURNS_OPTIONAL_LONG;
            case "java.util.OptionalDouble": return RateLimitBridge.RETURNS_OPTIONAL_DOUBLE;
            case "java.util.List":
            case "java.util.Collection":
            case "java.lang.Iterable":
                return RateLimitBridge.RETURNS_LIST;
            case "java.util.Set": return RateLimitBridge.RETURNS_SET;
            case "java.util.Map": return RateLimitBridge.RETURNS_MAP;
            default: return RateLimitBridge.RETURNS_NULL;
        }
    }
}
