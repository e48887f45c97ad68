package floor;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import java.lang.instrument.Instrumentation;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;

/**
 * The smallest Byte Buddy agent that does part of what ours does: {@code AgentBuilder} in
 * {@code premain}, with the settings Byte Buddy's documentation gives for advice (decorate, pool
 * descriptions, retransformation, no class format changes), one enter advice on
 * {@code HttpServlet.service(ServletRequest, ServletResponse)} that reads its argument. No rule
 * file, no limiter, no isolation. Its advice says once, on standard output, that it ran.
 */
public final class MinimalByteBuddyAgent {
    private MinimalByteBuddyAgent() {
    }

    public static void premain(String options, Instrumentation instrumentation) {
        new AgentBuilder.Default()
                .disableClassFormatChanges()
                .with(AgentBuilder.RedefinitionStrategy.RETRANSFORMATION)
                .with(AgentBuilder.TypeStrategy.Default.DECORATE)
                .with(AgentBuilder.DescriptionStrategy.Default.POOL_ONLY)
                .type(named("jakarta.servlet.http.HttpServlet"))
                .transform((builder, type, loader, module, domain) -> builder.visit(Advice.to(ServiceAdvice.class)
                        .on(named("service").and(takesArguments(2))
                                .and(takesArgument(0, named("jakarta.servlet.ServletRequest"))))))
                .installOn(instrumentation);
    }

    /** Inlined into {@code HttpServlet}: JDK types only. */
    public static final class ServiceAdvice {
        private ServiceAdvice() {
        }

        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.Argument(0) Object request) {
            if (request != null && System.getProperties().putIfAbsent("floor.advice.ran", "true") == null) {
                System.out.println("floor agent: advice ran");
            }
        }
    }
}
