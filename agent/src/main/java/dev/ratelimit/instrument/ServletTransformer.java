package dev.ratelimit.instrument;

import static net.bytebuddy.matcher.ElementMatchers.declaresMethod;
import static net.bytebuddy.matcher.ElementMatchers.hasDescriptor;
import static net.bytebuddy.matcher.ElementMatchers.hasSuperType;
import static net.bytebuddy.matcher.ElementMatchers.isAbstract;
import static net.bytebuddy.matcher.ElementMatchers.isInterface;
import static net.bytebuddy.matcher.ElementMatchers.namedOneOf;
import static net.bytebuddy.matcher.ElementMatchers.not;

import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.pool.TypePool;

/**
 * Instruments servlet entry points of both namespaces, matched by name only (never a class
 * literal: the agent links against no servlet API): implementations of {@code FilterChain}
 * ({@code doFilter(ServletRequest, ServletResponse)}) and of {@code Servlet}
 * ({@code service(ServletRequest, ServletResponse)}). The container's filter chain is reached
 * first on Tomcat and Undertow; Jetty calls a servlet directly when no filter applies.
 */
final class ServletTransformer {
    private final Advice advice;

    ServletTransformer(Advice.ExceptionHandler exceptionHandler) {
        ClassFileLocator locator = ClassFileLocator.ForClassLoader.of(ServletTransformer.class.getClassLoader());
        TypeDescription adviceType = TypePool.Default.of(locator).describe(ServletAdvice.class.getName()).resolve();
        this.advice = Advice.to(adviceType, locator).withExceptionHandler(exceptionHandler);
    }

    static ElementMatcher<TypeDescription> types() {
        return not(isInterface())
                .and(declaresMethod(entryPoints()))
                .and(hasSuperType(namedOneOf(
                        "jakarta.servlet.FilterChain", "javax.servlet.FilterChain",
                        "jakarta.servlet.Servlet", "javax.servlet.Servlet")));
    }

    /**
     * {@code void doFilter}/{@code service(ServletRequest, ServletResponse)} of one namespace:
     * exactly the descriptors {@link ClassPrefilter} looks for, so that the prefilter never
     * passes over a class this would match.
     */
    static ElementMatcher<MethodDescription> entryPoints() {
        return namedOneOf("doFilter", "service")
                .and(not(isAbstract()))
                .and(hasDescriptor("(Ljakarta/servlet/ServletRequest;Ljakarta/servlet/ServletResponse;)V")
                        .or(hasDescriptor("(Ljavax/servlet/ServletRequest;Ljavax/servlet/ServletResponse;)V")));
    }

    /** Adds the advice to {@code builder} for {@code type}, defined by {@code loader}. */
    DynamicType.Builder<?> transform(DynamicType.Builder<?> builder, TypeDescription type, ClassLoader loader) {
        return builder.visit(advice.on(entryPoints()));
    }

    /** The advice woven into the methods {@code methods} matches, for {@link AdviceTransformer#warmUp()} only. */
    DynamicType.Builder<?> warmUp(DynamicType.Builder<?> builder, ElementMatcher<? super MethodDescription> methods) {
        return builder.visit(advice.on(methods));
    }
}
