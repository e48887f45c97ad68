package dev.ratelimit.instrument;

import dev.ratelimit.bootstrap.RateLimitBridge;
import net.bytebuddy.asm.Advice;

/**
 * Advice for servlet entry points, {@code FilterChain.doFilter} and {@code Servlet.service}, in
 * {@code javax.servlet} and {@code jakarta.servlet} alike: it takes the request and response as
 * {@code Object} and leaves reading them to the runtime. Inlined into container and application
 * classes: it references only JDK and bridge types.
 */
final class ServletAdvice {
    private ServletAdvice() {
    }

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
    static boolean enter(@Advice.Argument(0) Object request, @Advice.Argument(1) Object response,
            @Advice.Local("rateLimitFacts") Object facts) {
        facts = RateLimitBridge.enterRequest(request, response);
        return facts == RateLimitBridge.REJECTED;
    }

    @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
    static void exit(@Advice.Argument(0) Object request, @Advice.Argument(1) Object response,
            @Advice.Local("rateLimitFacts") Object facts, @Advice.Thrown(readOnly = false) Throwable thrown) {
        if (facts != null && RateLimitBridge.exitRequest(request, response, facts, thrown)) {
            thrown = null;
        }
    }
}
